"""A model of each kind the registry stores, with every field set (`image`, `env`,
`swe_task`, `terminal_task`, `run`; keyword arguments replace fields), and the tables."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from envs.models import (
    Difficulty,
    EnvSpec,
    FailureKind,
    ImageRecord,
    Language,
    Limits,
    RunRecord,
    RunStatus,
    SWETask,
    TaskKind,
    TerminalTask,
    TestResult,
    VerificationRun,
)

AT = datetime(2024, 5, 17, 12, 30, 45, 123456, tzinfo=timezone.utc)
TABLES = {"images", "environments", "swe_tasks", "terminal_tasks", "runs", "attempts", "jobs"}


# --------------------------------------------------------------------------- factories


def image(tag: str = "envfactory/python:abc", **kw) -> ImageRecord:
    fields = dict(
        tag=tag,
        kind="language",
        language=Language.PYTHON,
        parent="envfactory/base:1",
        content_hash="sha256:" + "ab" * 32,
        size_bytes=5_000_000_000,  # past 32 bits
        versions={"python": "3.11.9"},
        created_at=AT,
    )
    return ImageRecord(**(fields | kw))


def env(name: str = "acme__widgets", **kw) -> EnvSpec:
    fields = dict(
        name=name,
        language=Language.PYTHON,
        base_image="envfactory/python:abc",
        setup_steps=("pip install -e .",),
        test_command="pytest -rA",
        report_format="junit",
        report_path="/tmp/r.xml",
        env={"A": "1"},
        limits=Limits(memory="1g"),
        image="envfactory/env:1",
        fingerprint="fp1",
    )
    return EnvSpec(**(fields | kw))


def swe_task(instance_id: str = "acme__widgets-1", **kw) -> SWETask:
    fields = dict(
        instance_id=instance_id,
        repo="acme/widgets",
        base_commit="a" * 40,
        patch="diff --git a/x b/x\n+é unicode ✓\n",
        test_patch="diff --git a/t b/t\n",
        problem_statement="It breaks.\n" * 50,
        created_at="2024-05-17T12:30:45Z",
        FAIL_TO_PASS=["t::a"],
        PASS_TO_PASS=["t::b", "t::c"],
        language=Language.PYTHON,
        issue_numbers=[7],
        pr_number=8,
        kind=TaskKind.BUG_FIX,
        env_spec=env(),
    )
    return SWETask(**(fields | kw))


def terminal_task(task_id: str = "csv-1", **kw) -> TerminalTask:
    fields = dict(
        task_id=task_id,
        instruction="Dedupe /data/in.csv.",
        dockerfile="FROM envfactory/base:1\n",
        files={"data/in.csv": "a\na\n"},
        solution="sort -u /data/in.csv\n",
        tests={"test.sh": "true\n"},
        family="csv",
        category="data",
        difficulty=Difficulty.EASY,
        tags=["csv"],
        verification=[VerificationRun(gate="oracle", passed=True, reward=1.0, at=AT)],
    )
    return TerminalTask(**(fields | kw))


def run(run_id: str = "run-1", **kw) -> RunRecord:
    fields = dict(
        run_id=run_id,
        kind="eval",
        target="acme__widgets-1",
        status=RunStatus.DONE,
        failure_kind=FailureKind.MODEL,
        resolved=False,
        results=[TestResult(test_id="t::a", status="FAILED", duration=0.5)],
        details={"model": "tiny", "n": [1, 2.5, None]},
        started_at=AT,
        finished_at=AT + timedelta(seconds=90),
    )
    return RunRecord(**(fields | kw))
