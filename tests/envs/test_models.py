"""The core nouns (envs/models.py): JSON in and out, frozen, SWE-bench-shaped."""

from __future__ import annotations

import inspect
import json
from datetime import datetime, timedelta, timezone

import pytest
from pydantic import BaseModel, ValidationError

from envs import models
from envs.models import (
    EnvSpec,
    ExecResult,
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

Status = models.TestStatus  # not imported by name: pytest would try to collect Test*

AT = datetime(2024, 5, 17, 12, 30, 45, 123456, tzinfo=timezone.utc)
ENV = EnvSpec(
    name="acme__widgets",
    language=Language.PYTHON,
    base_image="envfactory/python:abc123",
    setup_steps=("pip install -e .", "pip install pytest"),
    test_command="pytest -rA --junitxml=/tmp/report.xml",
    report_format="junit",
    report_path="/tmp/report.xml",
    env={"PYTHONHASHSEED": "0"},
    network=True,
    limits=Limits(memory="4g", pids=256, cpus=1.5, timeout=900.0, output_bytes=1024),
    image="envfactory/env:def456",
    fingerprint="sha256:0f0f",
)

# One fully populated instance of every model in envs/models.py.
SAMPLES: dict[type[BaseModel], BaseModel] = {
    TestResult: TestResult(
        test_id="tests/test_a.py::test_x", status=Status.FAILED, duration=0.25, message="boom"
    ),
    ExecResult: ExecResult(
        exit_code=137,
        stdout="out\n",
        stderr="err\n",
        duration=1.5,
        timed_out=True,
        oom_killed=True,
        stdout_truncated=True,
        stderr_truncated=True,
    ),
    Limits: Limits(memory="512m", pids=64, cpus=0.5, timeout=10.0, output_bytes=4096),
    EnvSpec: ENV,
    SWETask: SWETask(
        instance_id="acme__widgets-42",
        repo="acme/widgets",
        base_commit="a" * 40,
        patch="diff --git a/w.py b/w.py\n",
        test_patch="diff --git a/t.py b/t.py\n",
        problem_statement="Widgets break on Tuesdays.",
        hints_text="Look at the calendar.",
        created_at="2024-05-17T12:30:45Z",
        version="1.2",
        environment_setup_commit="b" * 40,
        FAIL_TO_PASS=["t.py::test_tuesday"],
        PASS_TO_PASS=["t.py::test_monday", "t.py::test_wednesday"],
        language=Language.PYTHON,
        issue_numbers=[41, 40],
        pr_number=42,
        kind=TaskKind.BUG_FIX,
        env_spec=ENV,
    ),
    VerificationRun: VerificationRun(gate="oracle", passed=True, reward=1.0, detail="ok", at=AT),
    TerminalTask: TerminalTask(
        task_id="csv-dedupe-7",
        instruction="Remove duplicate rows from /data/in.csv.",
        dockerfile="FROM envfactory/base:1\n",
        files={"data/in.csv": "a,b\n1,2\n1,2\n"},
        solution="#!/bin/sh\nsort -u /data/in.csv > /data/out.csv\n",
        tests={"test.sh": "#!/bin/sh\ntest -f /data/out.csv\n"},
        test_command="bash /tests/test.sh",
        family="csv",
        category="data-processing",
        difficulty=models.Difficulty.MEDIUM,
        tags=["csv", "sort"],
        agent_timeout_sec=300.0,
        verifier_timeout_sec=60.0,
        network=True,
        verification=[
            VerificationRun(gate="nop", passed=False, reward=0.0, at=AT),
            VerificationRun(gate="oracle", passed=True, reward=1.0, at=AT + timedelta(seconds=5)),
        ],
        image="envfactory/task:789",
    ),
    RunRecord: RunRecord(
        run_id="run-1",
        kind="eval",
        target="acme__widgets-42",
        status=RunStatus.DONE,
        failure_kind=FailureKind.MODEL,
        resolved=False,
        results=[TestResult(test_id="t.py::test_tuesday", status=Status.FAILED)],
        details={"model": "tiny", "tokens": 1234, "nested": {"ok": [1, 2.5, None, True]}},
        started_at=AT,
        finished_at=AT + timedelta(minutes=3),
    ),
    ImageRecord: ImageRecord(
        tag="envfactory/python:abc123",
        kind="language",
        language=Language.PYTHON,
        parent="envfactory/base:1",
        content_hash="sha256:abc123",
        size_bytes=123_456_789,
        versions={"python": "3.11.9", "pip": "24.0"},
        created_at=AT,
    ),
}


def _models_in_module() -> set[type[BaseModel]]:
    return {
        obj
        for _, obj in inspect.getmembers(models, inspect.isclass)
        if issubclass(obj, BaseModel)
        and obj.__module__ == models.__name__
        and obj is not models.Frozen
    }


def test_every_model_has_a_sample_here():
    # A new model in envs/models.py must be added to SAMPLES, and so gets the tests below.
    assert set(SAMPLES) == _models_in_module()


@pytest.mark.parametrize("model", list(SAMPLES.values()), ids=lambda m: type(m).__name__)
def test_model_round_trips_through_json(model: BaseModel):
    text = model.model_dump_json()
    again = type(model).model_validate_json(text)
    assert again == model
    assert again.model_dump_json() == text


@pytest.mark.parametrize("model", list(SAMPLES.values()), ids=lambda m: type(m).__name__)
def test_model_round_trips_through_a_json_dict(model: BaseModel):
    # The registry stores model_dump(mode="json") in JSON columns.
    data = json.loads(json.dumps(model.model_dump(mode="json")))
    assert type(model).model_validate(data) == model


@pytest.mark.parametrize("model", list(SAMPLES.values()), ids=lambda m: type(m).__name__)
def test_model_is_frozen(model: BaseModel):
    field = next(iter(type(model).model_fields))
    with pytest.raises(ValidationError, match="frozen"):
        setattr(model, field, getattr(model, field))


@pytest.mark.parametrize(
    "model",
    [m for m in SAMPLES.values() if not isinstance(m, SWETask)],
    ids=lambda m: type(m).__name__,
)
def test_model_rejects_unknown_fields(model: BaseModel):
    data = model.model_dump(mode="json") | {"no_such_field": 1}
    with pytest.raises(ValidationError, match="no_such_field"):
        type(model).model_validate(data)


def test_datetimes_keep_their_time_zone_through_json():
    run = SAMPLES[RunRecord]
    assert isinstance(run, RunRecord)
    again = RunRecord.model_validate_json(run.model_dump_json())
    assert again.started_at is not None
    assert again.started_at.utcoffset() == timedelta(0)


# --------------------------------------------------------------------------- SWETask


def test_swe_task_accepts_test_lists_as_json_strings_as_the_hf_datasets_give_them():
    task = SWETask(
        instance_id="x-1",
        repo="o/r",
        base_commit="c",
        FAIL_TO_PASS='["a::t1", "a::t2"]',
        PASS_TO_PASS="[]",
    )
    assert task.FAIL_TO_PASS == ["a::t1", "a::t2"]
    assert task.PASS_TO_PASS == []


def test_swe_task_accepts_test_lists_as_lists():
    task = SWETask(instance_id="x-1", repo="o/r", base_commit="c", FAIL_TO_PASS=["a::t1"])
    assert task.FAIL_TO_PASS == ["a::t1"]


@pytest.mark.parametrize("empty", [None, "", "   ", []])
def test_swe_task_reads_missing_test_lists_as_empty(empty):
    task = SWETask(instance_id="x-1", repo="o/r", base_commit="c", FAIL_TO_PASS=empty)
    assert task.FAIL_TO_PASS == []


@pytest.mark.parametrize("bad", ['{"a": 1}', "not json"])
def test_swe_task_rejects_test_lists_that_are_not_json_lists(bad):
    with pytest.raises((ValidationError, ValueError)):
        SWETask(instance_id="x-1", repo="o/r", base_commit="c", FAIL_TO_PASS=bad)


def test_to_swebench_gives_test_lists_as_json_strings():
    task = SAMPLES[SWETask]
    assert isinstance(task, SWETask)
    row = task.to_swebench()
    assert isinstance(row["FAIL_TO_PASS"], str)
    assert isinstance(row["PASS_TO_PASS"], str)
    assert json.loads(row["FAIL_TO_PASS"]) == task.FAIL_TO_PASS
    assert json.loads(row["PASS_TO_PASS"]) == task.PASS_TO_PASS
    json.dumps(row)  # the whole row is plain JSON
    assert SWETask.model_validate(row) == task  # and reads straight back


def test_swe_task_ignores_columns_it_does_not_know_in_imported_rows():
    row = {"instance_id": "x-1", "repo": "o/r", "base_commit": "c", "difficulty": "15 min"}
    assert SWETask.model_validate(row).instance_id == "x-1"


# --------------------------------------------------------------------------- FailureKind

INFRASTRUCTURE = {FailureKind.BUILD_FAILED, FailureKind.ENV_COLLAPSE, FailureKind.VERIFIER_ERROR}


@pytest.mark.parametrize("kind", list(FailureKind), ids=lambda k: k.value)
def test_failure_kind_is_infrastructure_only_for_the_infrastructure_kinds(kind: FailureKind):
    assert kind.is_infrastructure is (kind in INFRASTRUCTURE)


def test_model_failures_are_never_infrastructure():
    # A trainer learns from these, so they must not be filtered out as infrastructure noise.
    for kind in (FailureKind.NONE, FailureKind.MODEL, FailureKind.PATCH_FAILED):
        assert not kind.is_infrastructure


# --------------------------------------------------------------------------- ExecResult


def test_exec_result_ok_needs_exit_zero_and_no_timeout():
    assert ExecResult(exit_code=0).ok
    assert not ExecResult(exit_code=1).ok
    assert not ExecResult(exit_code=0, timed_out=True).ok


def test_exec_result_output_is_stdout_then_stderr():
    assert ExecResult(exit_code=0, stdout="a\n", stderr="b\n").output == "a\nb\n"
    assert ExecResult(exit_code=0, stdout="a").output == "a"
    assert ExecResult(exit_code=0, stderr="b").output == "b"
