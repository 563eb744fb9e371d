"""The synth run: resumable, registers survivors, reports yields; the CLI around it."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from envs.registry import Registry
from synth.cli import app, yield_tables
from synth.pipeline import plan_drafts, run_synth
from synth.spec import TaskDraft

pytestmark = pytest.mark.docker

FAMS = "dedupe-lines,cron-add-job"


def test_plan_is_round_robin_and_distinct():
    items = plan_drafts(["dedupe-lines", "cron-add-job"], 6, seed=3)
    assert all(isinstance(i, TaskDraft) for i in items)
    assert [i.family for i in items] == ["dedupe-lines", "cron-add-job"] * 3
    assert len({i.fingerprint for i in items}) == 6
    assert [i.task_id for i in items] == [i.task_id for i in plan_drafts(
        ["dedupe-lines", "cron-add-job"], 6, seed=3)]


def test_run_registers_survivors_and_resumes(docker_engine, tmp_home):
    seen = []
    with Registry() as reg:
        # One oracle run here: the three-run gate is covered by the per-family tests.
        report = run_synth(n=2, families=FAMS, seed=1, registry=reg, workers=2, oracle_runs=1,
                           progress=lambda o, done, total: seen.append((o.task_id, done, total)))
        assert report.verified == 2 and report.survival == 1.0
        assert report.stages() == {"planned": 2, "drafted": 2, "implemented": 2,
                                   "verified": 2, "registered": 2}
        assert {t.task_id for t in reg.list_terminal_tasks()} == {o.task_id for o in
                                                                  report.outcomes}
        assert [s[1] for s in seen] == [1, 2]
        again = run_synth(n=3, families=FAMS, seed=1, registry=reg, workers=2, oracle_runs=1)
    assert again.resumed == 2 and len(again.outcomes) == 3 and again.verified == 3
    fam = {f.family: f for f in again.per_family()}
    assert fam["dedupe-lines"].planned == 2 and fam["dedupe-lines"].verified == 2
    assert len(yield_tables(again)) == 2


def test_cli_json_and_one_line_errors(docker_engine, tmp_home):
    runner = CliRunner()
    r = runner.invoke(app, ["--families", "regex-emails", "--n", "1", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["stages"]["verified"] == 1 and data["outcomes"][0]["passed"]
    r = runner.invoke(app, ["families", "--json"])
    assert r.exit_code == 0 and len(json.loads(r.stdout)) >= 20
    r = runner.invoke(app, ["--families", "nope", "--n", "1"])
    assert r.exit_code == 2 and "unknown task family 'nope'" in r.output
    r = runner.invoke(app, ["ls", "--json"])
    assert [t["family"] for t in json.loads(r.stdout)] == ["regex-emails"]
    out = tmp_home / "export"
    r = runner.invoke(app, ["export", str(out), "--format", "harbor", "--json"])
    assert r.exit_code == 0, r.output
    (written,) = json.loads(r.stdout)["written"]
    r = runner.invoke(app, ["import", written, "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)[0]["passed"]
