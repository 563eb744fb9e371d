"""Dockerfiles read with `dockerfile-parse`: the one reader of a task's Dockerfile.

    instructions(text)   # [Instruction(name="FROM", value="debian:bookworm", line=1), ...]
    workdir_of(text)     # where the final stage's processes start, as Docker resolves it

Line continuations are joined, comments and parser directives (``# syntax=``) left out,
instruction names upper-cased (Docker reads them in any case). `workdir_of` follows the
final stage: its WORKDIRs in order, each with the ARG and ENV values in force substituted
and a relative one resolved against the one before, as Docker does; a stage built ``FROM``
an earlier stage starts where that one ended, any other at ``/`` (a base image's own
WORKDIR is not known here). The text is read from memory: nothing is written anywhere.
"""

from __future__ import annotations

import io
import posixpath
from dataclasses import dataclass

from dockerfile_parse import DockerfileParser
from dockerfile_parse.parser import image_from
from dockerfile_parse.util import WordSplitter

__all__ = ["Instruction", "instructions", "workdir_of"]


@dataclass(frozen=True)
class Instruction:
    name: str  # upper case: FROM, RUN, COPY, WORKDIR, ...
    value: str  # its arguments, continuation lines joined, as written (no substitution)
    line: int  # 1-based line it starts on


def _parser(text: str) -> DockerfileParser:
    # fileobj: the parser reads the bytes given (without one it reads ./Dockerfile)
    return DockerfileParser(fileobj=io.BytesIO(text.encode("utf-8")))


def instructions(text: str) -> list[Instruction]:
    """The instructions of a Dockerfile, in order, comments left out."""
    return [Instruction(i["instruction"], i["value"].strip(), i["startline"] + 1)
            for i in _parser(text).structure if i["instruction"] != "COMMENT"]


def workdir_of(text: str) -> str:
    """The working directory of the image a Dockerfile builds: its final stage's last
    WORKDIR, substituted and resolved; ``/`` when it sets none."""
    parser = _parser(text)
    parents = iter(parser.parent_images)  # each FROM's image, build ARGs substituted
    stages: dict[str, str] = {}
    workdir, stage = "/", ""
    for ins, ctx in zip(parser.structure, parser.context_structure, strict=True):
        if ins["instruction"] == "FROM":
            image, name = image_from(ins["value"])
            parent = next(parents, image) if image is not None else ""
            workdir, stage = stages.get((parent or "").lower(), "/"), (name or "").lower()
        elif ins["instruction"] == "WORKDIR":
            value = WordSplitter(ins["value"].strip(), args=ctx.args, envs=ctx.envs).dequote()
            if value:
                workdir = "/" + posixpath.normpath(posixpath.join(workdir, value)).lstrip("/")
        if stage:
            stages[stage] = workdir
    return workdir
