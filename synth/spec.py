"""The typed records of synthesis: drafts, blueprints, gates and outcomes (frozen pydantic)."""

from __future__ import annotations

import hashlib
import json
import re
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from envs.models import Difficulty


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Gate(str, Enum):
    """Where a task can fail, in the order the pipeline checks it."""

    DRAFT = "draft"  # the family could not draft (bad parameters, LLM answer rejected)
    IMPLEMENT = "implement"  # the family could not implement the draft
    DUPLICATE = "duplicate"  # a near duplicate of a task already kept
    HERMETIC = "hermetic"  # tests or environment reach for the network / install at grading
    BUILD = "build"  # the image does not build
    ISOLATION = "isolation"  # tests or solution are visible to the agent before grading
    NOP = "nop"  # the untouched environment already passes the tests
    ORACLE = "oracle"  # the oracle solution fails in some fresh container
    MUTANTS = "mutants"  # the tests accept a broken solution
    INFRA = "infra"  # the engine failed (not the task's fault)


class Blueprint(Frozen):
    """What a family's implementation yields; `implement.py` turns it into a TerminalTask.

    `files` are absolute container paths -> text, baked into the image; `setup` are shell
    steps run at image build (no network is needed: they only use the base image's tools);
    `solution` is a list of steps (generic mutants drop steps); `check` is Python source
    defining `test_*` functions that inspect the final state; `mutants` are plausible wrong
    solutions the tests must reject.
    """

    image: str = "base"
    # Steps identical for every task of a family run first, so the engine's layer cache
    # shares them (warming a compiler cache once, not once per task).
    prelude: tuple[str, ...] = ()
    files: dict[str, str] = Field(default_factory=dict)
    executables: tuple[str, ...] = ()
    setup: tuple[str, ...] = ()
    solution: tuple[str, ...]
    check: str
    mutants: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    workdir: str = "/app"


class TaskDraft(Frozen):
    """Stage 1: a family, its parameters and the instruction an agent reads."""

    task_id: str
    family: str
    category: str
    difficulty: Difficulty
    seed: int
    params: dict[str, Any]
    instruction: str
    drafter: str = "template"  # "template" or "llm"
    fingerprint: str


class GateRun(Frozen):
    gate: Gate
    passed: bool
    detail: str = ""
    seconds: float = 0.0


class TaskOutcome(Frozen):
    """What happened to one draft: the stage it reached and the gate it failed, if any."""

    task_id: str
    family: str
    category: str = ""
    failed_gate: Gate | None = None
    detail: str = ""
    runs: list[GateRun] = Field(default_factory=list)
    seconds: float = 0.0
    registered: bool = False

    @property
    def passed(self) -> bool:
        return self.failed_gate is None

    @property
    def stage(self) -> str:
        """The last stage the task got through: drafted, implemented or verified."""
        if self.failed_gate is None:
            return "verified"
        if self.failed_gate == Gate.DRAFT:
            return "failed"
        if self.failed_gate == Gate.IMPLEMENT:
            return "drafted"
        return "implemented"


_WS = re.compile(r"\s+")
_PUNCT = re.compile(r"[^\w/.\-\s]")


def normalize_instruction(text: str) -> str:
    """Lowercase, no punctuation but path characters, one space: phrasing noise removed."""
    return _WS.sub(" ", _PUNCT.sub(" ", text.lower())).strip()


def fingerprint(family: str, params: dict[str, Any]) -> str:
    """The identity of a task's content: its family and canonical parameters."""
    blob = json.dumps({"family": family, "params": params}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def instruction_key(text: str) -> str:
    return hashlib.sha256(normalize_instruction(text).encode()).hexdigest()[:20]
