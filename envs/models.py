"""The core nouns of envfactory (see ARCHITECTURE.md).

Every model is a frozen pydantic model that serializes to JSON and back. Field names of
`SWETask` are SWE-bench's, so SWE-bench-style JSONL imports and exports without a mapping
table (FAIL_TO_PASS / PASS_TO_PASS accept the JSON-string form the HF datasets use).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class TestStatus(str, Enum):
    __test__ = False  # not a pytest test class, despite the name

    PASSED = "PASSED"
    FAILED = "FAILED"
    SKIPPED = "SKIPPED"
    ERROR = "ERROR"
    XFAIL = "XFAIL"


class TestResult(Frozen):
    __test__ = False  # not a pytest test class, despite the name

    test_id: str
    status: TestStatus
    duration: float | None = None
    message: str | None = None


class FailureKind(str, Enum):
    """Why a run did not produce a gradeable outcome, or whose fault a failure is.

    A trainer drops the infrastructure kinds and learns from the rest.
    """

    NONE = "NONE"
    MODEL = "MODEL"  # the agent's own action failed (bad patch, wrong command)
    PATCH_FAILED = "PATCH_FAILED"  # a predicted patch did not apply
    TIMEOUT = "TIMEOUT"
    OOM = "OOM"
    BUILD_FAILED = "BUILD_FAILED"
    ENV_COLLAPSE = "ENV_COLLAPSE"  # container died, image missing, engine gone
    VERIFIER_ERROR = "VERIFIER_ERROR"  # the report could not be read or the grader broke

    @property
    def is_infrastructure(self) -> bool:
        return self in _INFRA_KINDS


_INFRA_KINDS = frozenset(
    {FailureKind.BUILD_FAILED, FailureKind.ENV_COLLAPSE, FailureKind.VERIFIER_ERROR}
)


class ExecResult(Frozen):
    """The outcome of one command in a sandbox. Output is decoded with replacement and capped."""

    exit_code: int
    stdout: str = ""
    stderr: str = ""
    duration: float = 0.0
    timed_out: bool = False
    oom_killed: bool = False
    stdout_truncated: bool = False
    stderr_truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    @property
    def output(self) -> str:
        """stdout then stderr, as a person reading a terminal would see them."""
        if not self.stderr:
            return self.stdout
        if not self.stdout:
            return self.stderr
        return self.stdout.rstrip("\n") + "\n" + self.stderr


class Limits(Frozen):
    """Resource limits of a sandbox. Sizes take docker's forms: '512m', '2g' or bytes."""

    memory: str = "2g"
    pids: int = 512
    cpus: float = 2.0
    timeout: float = 1800.0  # default wall-clock limit of one exec, seconds
    output_bytes: int = 4 * 1024 * 1024  # per stream, head + tail kept


class Language(str, Enum):
    PYTHON = "python"
    JAVA = "java"
    GO = "go"
    C = "c"
    CPP = "cpp"
    JAVASCRIPT = "javascript"
    TYPESCRIPT = "typescript"
    PHP = "php"
    RUBY = "ruby"
    RUST = "rust"


class EnvSpec(Frozen):
    """How to make an environment and how to run its tests."""

    name: str
    language: Language
    base_image: str
    setup_steps: tuple[str, ...] = ()
    test_command: str = ""
    report_format: str = "exitcode"
    report_path: str | None = None  # file in the container the report is written to
    workdir: str = "/testbed"
    env: dict[str, str] = Field(default_factory=dict)
    network: bool = False
    limits: Limits = Field(default_factory=Limits)
    image: str | None = None  # the built image, once built
    fingerprint: str | None = None  # hash of what decides the dependencies
    # An instance is the env image plus a checkout of this commit in the workdir, made at
    # sandbox start, so a second commit with the same dependencies needs no new image.
    checkout: str | None = None
    resolved: dict[str, str] = Field(default_factory=dict)  # package -> version, as built


class TaskKind(str, Enum):
    BUG_FIX = "bug_fix"
    FEATURE = "feature"
    REFACTOR = "refactor"
    OTHER = "other"


def _test_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = value.strip()
        if not value:
            return []
        parsed = json.loads(value)
        if not isinstance(parsed, list):
            raise ValueError("expected a JSON list of test ids")
        value = parsed
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"expected a list of test ids, got {type(value).__name__}")
    return [str(v) for v in value]


class SWETask(Frozen):
    """An Issue-PR task, with SWE-bench's field names."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    instance_id: str
    repo: str
    base_commit: str
    patch: str = ""
    test_patch: str = ""
    problem_statement: str = ""
    hints_text: str = ""
    created_at: str = ""
    version: str = ""
    environment_setup_commit: str = ""
    FAIL_TO_PASS: list[str] = Field(default_factory=list)
    PASS_TO_PASS: list[str] = Field(default_factory=list)
    # provenance
    language: Language | None = None
    issue_numbers: list[int] = Field(default_factory=list)
    pr_number: int | None = None
    kind: TaskKind = TaskKind.OTHER
    env_spec: EnvSpec | None = None

    @field_validator("FAIL_TO_PASS", "PASS_TO_PASS", mode="before")
    @classmethod
    def _lists(cls, value: Any) -> list[str]:
        return _test_list(value)

    def to_swebench(self) -> dict[str, Any]:
        """The HF-dataset row: test lists as JSON strings."""
        row = self.model_dump(mode="json")
        row["FAIL_TO_PASS"] = json.dumps(self.FAIL_TO_PASS)
        row["PASS_TO_PASS"] = json.dumps(self.PASS_TO_PASS)
        return row


class Difficulty(str, Enum):
    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"
    UNKNOWN = "unknown"


class VerificationRun(Frozen):
    gate: str  # "build", "nop", "oracle", "mutant:<name>", ...
    passed: bool
    reward: float | None = None
    detail: str = ""
    at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))


class TerminalTask(Frozen):
    """A synthesized (or imported) terminal task, Harbor-shaped."""

    task_id: str
    instruction: str
    dockerfile: str
    files: dict[str, str] = Field(default_factory=dict)  # environment files, path -> text
    solution: str  # solve.sh
    tests: dict[str, str] = Field(default_factory=dict)  # tests/ files, path -> text
    test_command: str = "bash /tests/test.sh"
    family: str = ""
    category: str = ""
    difficulty: Difficulty = Difficulty.UNKNOWN
    tags: list[str] = Field(default_factory=list)
    agent_timeout_sec: float = 600.0
    verifier_timeout_sec: float = 120.0
    network: bool = False
    verification: list[VerificationRun] = Field(default_factory=list)
    image: str | None = None
    # Broken solutions (name -> script) the tests must reject (synth's mutation gate), and a
    # fingerprint of what makes the task itself (near-duplicate detection).
    mutants: dict[str, str] = Field(default_factory=dict)
    fingerprint: str = ""


class RunStatus(str, Enum):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class RunRecord(Frozen):
    """One unit of work the factory did: an eval of a prediction, a validation, a build."""

    run_id: str
    kind: str  # "eval", "validate", "build", "verify", ...
    target: str  # instance_id / task_id / image
    status: RunStatus = RunStatus.PENDING
    failure_kind: FailureKind = FailureKind.NONE
    resolved: bool | None = None
    results: list[TestResult] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)
    started_at: datetime | None = None
    finished_at: datetime | None = None


class ImageRecord(Frozen):
    """A built image the registry knows: base, language toolchain, env or task image."""

    tag: str
    kind: str  # "base", "language", "env", "task", "snapshot"
    language: Language | None = None
    parent: str | None = None
    content_hash: str
    size_bytes: int | None = None
    versions: dict[str, str] = Field(default_factory=dict)  # toolchain -> version
    created_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
