"""`envfactory eval` on hand-made sample tasks: gold resolves all, empty none, bad patches and
hung code get their own failure kinds, and a rerun skips what is finished."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from data import eval_samples
from envs.models import FailureKind
from harness.evaluate import EvalError, Prediction, evaluate, task_from_row

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def built(docker_engine):
    return eval_samples.build_tasks()


@pytest.fixture(scope="module")
def tasks(built):
    return {b.task.instance_id: b.task for b in built}


@pytest.fixture()
def runs(tmp_path):
    return tmp_path / "runs"


def test_gold_resolves_every_task(tasks, runs):
    summary = evaluate("gold", tasks=tasks, runs_dir=runs, workers=2, record=False)
    assert summary.resolved_instances == len(tasks) == summary.submitted_instances
    for r in summary.instances:
        assert r["failure_kind"] == "NONE"
        assert r["tests_status"]["FAIL_TO_PASS"]["failure"] == []


def test_empty_resolves_none_and_blames_no_infrastructure(tasks, runs):
    summary = evaluate("empty", tasks=tasks, runs_dir=runs, workers=2, record=False)
    assert summary.resolved_instances == 0
    assert summary.error_instances == 0
    assert summary.empty_patch_instances == len(tasks)
    for r in summary.instances:
        assert r["tests_status"]["FAIL_TO_PASS"]["success"] == []
        assert r["tests_status"]["PASS_TO_PASS"]["failure"] == []  # P2P passes before the fix


def test_malformed_patch_says_patch_did_not_apply(built, tasks, runs):
    b = built[0]
    pred = Prediction(instance_id=b.task.instance_id, model_name_or_path="m",
                      model_patch=b.bad_patch)
    (r,) = evaluate([pred], tasks=tasks, runs_dir=runs, record=False).instances
    assert r["failure_kind"] == FailureKind.PATCH_FAILED.value
    assert r["reason"].startswith("patch did not apply")
    assert not r["patch_successfully_applied"] and not r["resolved"]


def test_infinite_loop_is_a_timeout_not_unresolved(built, tasks, runs):
    b = next(x for x in built if x.sample.name == "pyclamp")
    pred = Prediction(instance_id=b.task.instance_id, model_name_or_path="m",
                      model_patch=b.loop_patch)
    summary = evaluate([pred], tasks=tasks, runs_dir=runs, timeout=5, record=False)
    (r,) = summary.instances
    assert r["failure_kind"] == FailureKind.TIMEOUT.value and not r["resolved"]
    assert r["timings"]["run"] < 15


def test_rerun_skips_finished_instances(tasks, runs):
    first = evaluate("gold", tasks=tasks, runs_dir=runs, run_id="again", record=False)
    assert first.skipped_instances == 0
    second = evaluate("gold", tasks=tasks, runs_dir=runs, run_id="again", record=False)
    assert second.skipped_instances == len(tasks)
    assert second.resolved_ids == first.resolved_ids
    forced = evaluate("gold", tasks=tasks, runs_dir=runs, run_id="again", force=True,
                      record=False)
    assert forced.skipped_instances == 0


def test_per_instance_files_and_summary(tasks, runs):
    summary = evaluate("gold", tasks=tasks, runs_dir=runs, run_id="files", record=False)
    run_dir = Path(summary.run_dir)
    assert json.loads((run_dir / "report.json").read_text())["resolved_instances"] == len(tasks)
    for iid in tasks:
        inst = run_dir / "gold" / iid
        assert (inst / "patch.diff").read_text() == tasks[iid].patch
        assert (inst / "test_output.txt").stat().st_size > 0
        assert json.loads((inst / "report.json").read_text())["resolved"] is True


def test_unknown_instance_is_a_clear_error(tasks, runs):
    pred = Prediction(instance_id="nope__nope-1", model_patch="")
    with pytest.raises(EvalError, match="unknown instances"):
        evaluate([pred], tasks=tasks, runs_dir=runs, record=False)


def test_instance_rows_round_trip_through_swebench_form(tasks):
    for task in tasks.values():
        row = json.loads(json.dumps(task.to_swebench()))
        assert isinstance(row["FAIL_TO_PASS"], str)
        assert task_from_row(row) == task


def test_cli_eval_json_and_resume(tasks, tmp_path):
    dataset = tmp_path / "tasks.jsonl"
    dataset.write_text("".join(json.dumps(t.to_swebench()) + "\n" for t in tasks.values()))
    exe = str(Path(sys.executable).with_name("envfactory"))
    env = {**os.environ, "ENVFACTORY_HOME": str(tmp_path / "home")}
    args = [exe, "eval", "gold", "--dataset", str(dataset), "--run-id", "cli", "--json",
            "--workers", "2"]
    proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["resolved_instances"] == len(tasks)
    again = json.loads(subprocess.run(args, capture_output=True, text=True, env=env,
                                      timeout=600).stdout)
    assert again["skipped_instances"] == len(tasks)
