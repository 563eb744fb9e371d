"""Language plug-ins: how to set up and test a repository of each language.

A plug-in turns a repository and its `Detection` into a `Plan`: the toolchain image family,
setup steps, a test command that writes a structured report the parsers in `envs.reports`
read, and a per-test command template. Plug-ins register with `@register("<language>")`;
a failed lookup lists the known names.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from envs.models import Language
from repolaunch.detect import Detection


class Plan(BaseModel):
    model_config = ConfigDict(frozen=True)

    language: Language
    image_family: str  # envs.images recipe name ("python", "cpp", "node", ...)
    suite: str | None = None  # the Debian suite whose toolchain fits (None: the default)
    build_system: str
    test_framework: str
    setup_steps: tuple[str, ...] = ()  # run in the workdir at env-build time, network on
    test_command: str  # run in the workdir; writes the report
    report_format: str  # an envs.reports format, "name" or "name:variant"
    report_path: str | None = None  # None: the report is the command's stdout
    # Run only chosen tests: "{tests}" is replaced by the space-joined, shell-quoted ids.
    per_test_command: str = ""
    # Run at build time after setup, "{tests}" replaced by test files that exist: a runner
    # that cannot start (or collect them) is diagnosed while the environment is built.
    check_command: str = ""
    # A narrower setup to rebuild with when the check fails and no diagnosis cures it (an
    # optional dependency that breaks the import of the project itself).
    fallback_steps: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)
    # Globs (relative to the repo root) of the files that decide the dependencies; their
    # contents hash into the env image's fingerprint.
    dependency_files: tuple[str, ...] = ()
    network_at_test: bool = False
    notes: tuple[str, ...] = ()


class LanguagePlugin(Protocol):
    language: Language

    def plan(self, repo: Path, detection: Detection) -> Plan: ...


_PLUGINS: dict[str, LanguagePlugin] = {}
_MODULES = ("python", "java", "go", "c", "cpp", "javascript", "typescript", "php", "ruby")


def register(name: str):
    def deco(cls):
        _PLUGINS[name] = cls()
        return cls

    return deco


def _load() -> None:
    for mod in _MODULES:
        try:
            importlib.import_module(f"repolaunch.languages.{mod}")
        except ModuleNotFoundError as exc:
            if exc.name != f"repolaunch.languages.{mod}":
                raise


def get(name: Language | str) -> LanguagePlugin:
    _load()
    key = name.value if isinstance(name, Language) else str(name)
    try:
        return _PLUGINS[key]
    except KeyError:
        raise KeyError(f"no language plug-in {key!r}; known: {', '.join(sorted(_PLUGINS))}") \
            from None


def names() -> list[str]:
    _load()
    return sorted(_PLUGINS)


def plan(repo: Path, detection: Detection, **hints: Any) -> Plan:
    """The plug-in's plan; ``hints`` (``resolve_date``, ``suite``) go to plug-ins that take
    them."""
    plugin = get(detection.primary)
    accepted = inspect.signature(plugin.plan).parameters
    return plugin.plan(repo, detection, **{k: v for k, v in hints.items() if k in accepted})
