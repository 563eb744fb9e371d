"""Ctrl-C in the middle of `tasks synth`, `runs eval` and `tasks mine`, then the same command
again: the interrupted run exits 130 and says how to resume, leaves no container, and the
resumed run does only what was left: nothing lost, nothing done twice, and a result that was
an infrastructure failure is done again."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from envs.engine import client
from envs.registry import Registry

pytestmark = pytest.mark.docker

EXE = str(Path(sys.executable).with_name("envfactory"))


def sandboxes(pids: set[int]) -> set[str]:
    """The sandbox containers these processes own (the owner label is `host:pid`)."""
    owners = {f"{socket.gethostname()}:{pid}" for pid in pids}
    # The low-level list: one call, no per-container inspect that races a removal.
    return {c["Id"] for c in client().api.containers(all=True,
                                                     filters={"label": "envfactory.sandbox"})
            if c["Labels"].get("envfactory.owner") in owners}


def interrupt_when(args: list[str], env: dict[str, str], ready: Callable[[], bool],
                   timeout: float = 600) -> tuple[subprocess.CompletedProcess[str], set[int]]:
    """Start the command, send SIGINT once `ready()` holds, and wait for it to exit; the
    run and the pids of it and of every process it started (a pool's workers)."""
    # SIGINT at its default in the child: a runner started in the background by a
    # non-interactive shell (`cmd &`) ignores SIGINT, and an ignored signal is inherited
    proc = subprocess.Popen([EXE, *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    pids = {proc.pid}

    def watch() -> None:
        with contextlib.suppress(psutil.Error):
            pids.update(c.pid for c in psutil.Process(proc.pid).children(recursive=True))

    deadline = time.monotonic() + timeout
    while not ready():
        watch()
        assert proc.poll() is None, f"finished before it could be interrupted: {proc.stderr}"
        assert time.monotonic() < deadline, "never reached the point to interrupt"
        time.sleep(0.2)
    watch()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), pids


def run(args: list[str], env: dict[str, str]) -> dict:
    proc = subprocess.run([EXE, *args, "--json"], env=env, capture_output=True, text=True,
                          timeout=1800)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    return json.loads(proc.stdout)


def records(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            pass  # a torn last line: the state file repairs it
    return [r for r in out if r.get("key") != "__settings__"]


def mark_infra(path: Path, field: str, value: object) -> str:
    """Rewrite the first finished record as an infrastructure failure; its key."""
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        rec = json.loads(line)
        if rec.get("key") != "__settings__":
            rec[field] = value
            lines[i] = json.dumps(rec)
            path.write_text("\n".join(lines) + "\n")
            return rec["key"]
    raise AssertionError("no record")


def assert_interrupted(run_: tuple[subprocess.CompletedProcess[str], set[int]]) -> None:
    proc, pids = run_
    assert proc.returncode == 130, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("interrupted; rerun"), last
    assert sandboxes(pids) == set(), "the interrupted run left containers"


@pytest.fixture()
def env(tmp_home) -> dict[str, str]:
    return {**os.environ, "ENVFACTORY_HOME": str(tmp_home), "ENVFACTORY_DB_URL": ""}


def test_synth_interrupted_then_resumed(env, tmp_home):
    from synth.pipeline import state_path

    families = ["dedupe-lines", "word-frequency", "log-error-count", "csv-group-sum"]
    args = ["tasks", "synth", "--families", ",".join(families), "--n", "4", "--seed", "11",
            "--workers", "1"]
    state = state_path(11, families)
    assert_interrupted(interrupt_when(args, env, lambda: len(records(state)) >= 1))
    done_before = {r["task_id"] for r in records(state)}
    assert 1 <= len(done_before) < 4  # the queued drafts did not run after the interrupt
    retried = mark_infra(state, "failed_gate", "infra")

    report = run(args, env)
    assert report["resumed"] == len(done_before) - 1  # the infrastructure failure is redone
    assert len(report["outcomes"]) == 4
    assert [r["key"] for r in records(state)].count(retried) == 2  # marked, then redone
    final = {}
    for r in records(state):
        final[r["task_id"]] = r
    assert sorted(final) == sorted(o["task_id"] for o in report["outcomes"])
    with Registry() as reg:
        ids = [t.task_id for t in reg.list_terminal_tasks()]
    assert len(ids) == len(set(ids)) == report["stages"]["registered"]


def test_eval_interrupted_then_resumed_and_a_corrected_patch_is_evaluated_again(
        env, tmp_home, tmp_path):
    from data import eval_samples

    built = eval_samples.build_tasks()
    dataset = tmp_path / "tasks.jsonl"
    dataset.write_text("".join(b.task.model_dump_json() + "\n" for b in built))
    first = built[0].task.instance_id
    # one slow prediction first, so there is a moment to interrupt after one verdict
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"instance_id": b.task.instance_id,
                                         "model_name_or_path": "m",
                                         "model_patch": b.task.patch}) + "\n" for b in built))
    args = ["runs", "eval", str(preds), "-d", str(dataset), "--run-id", "r1", "--workers", "1"]
    state = tmp_home / "runs" / "r1" / "state.jsonl"
    assert_interrupted(interrupt_when(args, env, lambda: len(records(state)) >= 1))
    done_before = len({r["key"] for r in records(state)})
    assert 1 <= done_before < len(built)
    mark_infra(state, "failure_kind", "VERIFIER_ERROR")

    summary = run(args, env)
    assert summary["skipped_instances"] == done_before - 1
    assert summary["resolved_instances"] == summary["submitted_instances"] == len(built)
    assert len({r["key"] for r in records(state)}) == len(built)

    # A corrected predictions file: the changed instance is evaluated again, not answered
    # with the old verdict; the others are kept.
    preds.write_text("".join(json.dumps({"instance_id": b.task.instance_id,
                                         "model_name_or_path": "m",
                                         "model_patch": "" if b.task.instance_id == first
                                         else b.task.patch}) + "\n" for b in built))
    again = run(args, env)
    assert again["skipped_instances"] == len(built) - 1
    by_id = {r["instance_id"]: r for r in again["instances"]}
    assert not by_id[first]["resolved"]
    assert again["resolved_instances"] == len(built) - 1


def test_mine_interrupted_then_resumed(env, tmp_home, tmp_path):
    from data import samples

    repo = samples.write(samples.get("py-textkit"), tmp_path)
    args = ["tasks", "mine", str(repo)]
    state_dir = tmp_home / "state" / "mine"

    def validated() -> int:
        return sum(len(records(p)) for p in state_dir.glob("*.jsonl"))

    assert_interrupted(interrupt_when(args, env, lambda: validated() >= 1))
    (state,) = state_dir.glob("*.jsonl")
    done_before = len(records(state))
    mark_infra(state, "validation", {"verified": False, "reason": "validation_error"})

    report = run(args, env)
    assert report["resumed"] == done_before - 1
    assert report["validated"] == report["candidates"]
    keys = Counter(r["key"] for r in records(state))
    assert len(keys) == report["candidates"]
    with Registry() as reg:
        ids = [t.instance_id for t in reg.list_swe_tasks()]
        runs = Counter(r.target for r in reg.list_runs(kind="validate"))
    assert sorted(ids) == sorted(report["verified_ids"]) and len(ids) == len(set(ids))
    assert set(runs) <= {t["instance_id"] for t in report["tasks"]}
