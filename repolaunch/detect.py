"""Detect a repository's languages, build system, package manager, test framework and versions
from its own files (no network, no LLM)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from envs.models import Language


class Detection(BaseModel):
    model_config = ConfigDict(frozen=True)

    primary: Language
    languages: dict[Language, float] = Field(default_factory=dict)  # share of source bytes
    build_system: str = "plain"  # pyproject, setuptools, maven, gradle, go-modules, cmake, ...
    package_manager: str | None = None  # pip, npm, yarn, pnpm, composer, bundler, ...
    test_framework: str | None = None  # pytest, unittest, junit5, gotest, gtest, jest, ...
    versions: dict[str, str] = Field(default_factory=dict)  # e.g. {"python": ">=3.9"}
    evidence: tuple[str, ...] = ()  # the files the verdict rests on
    hints: tuple[str, ...] = ()  # e.g. commands seen in CI workflow files


class DetectionError(ValueError):
    """Nothing in the repository says what it is; one line."""


def detect(repo: Path) -> Detection:
    raise NotImplementedError  # filled in by repolaunch/detect.py's owner
