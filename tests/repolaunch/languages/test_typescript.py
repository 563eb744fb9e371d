"""The TypeScript plug-in: the Plan's shape (no Docker), and every TypeScript sample set up
and tested in real containers with per-test results equal to what its generator planted;
a planted fix's FAIL_TO_PASS fails before it and passes after; the per-test template runs
only the chosen tests."""

from __future__ import annotations

import json

import pytest

from data import samples
from envs.models import Language
from repolaunch import languages
from repolaunch.detect import Detection, detect
from repolaunch.languages import typescript as ts
from tests.repolaunch.conftest import statuses
from tests.repolaunch.languages.test_javascript import (
    before_and_after,
    check_plan_shape,
    det_of,
    run_per_test,
)

TS_SAMPLES = [s.name for s in samples.all_samples(Language.TYPESCRIPT)]


def test_plugin_registered():
    assert "typescript" in languages.names()
    assert isinstance(languages.get("typescript"), ts.TypeScriptPlugin)


@pytest.mark.parametrize("name", TS_SAMPLES)
def test_plan_shape(name, tmp_path):
    sample = samples.get(name)
    repo = samples.write(sample, tmp_path)
    plan = languages.get("typescript").plan(repo, det_of(sample))
    assert plan.language is Language.TYPESCRIPT
    check_plan_shape(plan, sample, repo)
    assert languages.plan(repo, detect(repo)) == plan
    if sample.test_framework in ts.NEEDS_BUILD:
        # compiled before the tests, from a clean outDir; the outDir is git-ignored
        assert "rm -rf build && $T -p tsconfig.json" in plan.test_command
        assert plan.test_command.index("tsc") < plan.test_command.index("node --test")
        assert "build/" in (repo / ".gitignore").read_text()
    else:
        assert "tsc" not in plan.test_command


def test_samples_cover_the_runners():
    assert {samples.get(n).test_framework for n in TS_SAMPLES} >= {"node-test", "vitest"}
    for name in TS_SAMPLES:
        s = samples.get(name)
        assert len(s.commits) >= 4
        assert {"FAILED", "SKIPPED"} <= {v.value for v in s.expected.values()}


def test_out_dir_and_tsconfig_with_comments(tmp_path):
    (tmp_path / "package.json").write_text('{"scripts": {"test": "node --test"}}')
    (tmp_path / "tsconfig.json").write_text(
        '{\n  // comment\n  "compilerOptions": {"outDir": "./dist/", /* x */ "strict": true,},\n'
        '  "include": ["src"],\n}\n')
    assert ts.out_dir(tmp_path, "tsconfig.json") == "dist"
    det = Detection(primary=Language.TYPESCRIPT, test_framework="node-test")
    plan = ts.TypeScriptPlugin().plan(tmp_path, det)
    assert "rm -rf dist && $T -p tsconfig.json" in plan.test_command
    # scripts.test names no paths: node's runner is pointed at the build output
    assert plan.test_command.endswith(" dist")
    # an outDir outside the repository is never removed
    (tmp_path / "tsconfig.json").write_text('{"compilerOptions": {"outDir": "../elsewhere"}}')
    assert ts.out_dir(tmp_path, "tsconfig.json") is None
    assert "rm -rf" not in ts.TypeScriptPlugin().plan(tmp_path, det).test_command.split(
        "mkdir")[1]


def test_no_tsconfig_no_build(tmp_path):
    (tmp_path / "package.json").write_text('{"devDependencies": {"vitest": "^1.6.0"}}')
    plan = ts.TypeScriptPlugin().plan(tmp_path, Detection(primary=Language.TYPESCRIPT))
    assert plan.test_framework == "vitest" and "tsc" not in plan.test_command
    assert plan.report_format == "vitest-json"


def test_node_loading_ts_itself_needs_no_build(tmp_path):
    # ts-extras: node --test --import=tsx/esm test/*.ts: tsx compiles; tsc would only cost
    (tmp_path / "tsconfig.json").write_text('{"compilerOptions": {"outDir": "dist"}}')
    det = Detection(primary=Language.TYPESCRIPT, test_framework="node-test")
    for script in ("node --test --import=tsx/esm test/*.ts && tsc --project test",
                   "node --import tsx --test test/*.ts",
                   "node --loader ts-node/esm --test test/",
                   "node -r ts-node/register --test test/x.ts",
                   "node --experimental-strip-types --test test/"):
        (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": script}}))
        plan = ts.TypeScriptPlugin().plan(tmp_path, det)
        assert "tsc" not in plan.test_command, script
        assert not plan.test_command.endswith(" dist"), script
    assert ts.TypeScriptPlugin().plan(tmp_path, det).test_command.endswith(" test/")
    # the glob stays a glob
    (tmp_path / "package.json").write_text(json.dumps(
        {"scripts": {"test": "node --test --import=tsx/esm test/*.ts"}}))
    assert ts.TypeScriptPlugin().plan(tmp_path, det).test_command.endswith(
        " --import=tsx/esm test/*.ts")
    # a plain node --test still compiles first
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": "node --test"}}))
    assert "$T -p tsconfig.json" in ts.TypeScriptPlugin().plan(tmp_path, det).test_command


# --------------------------------------------------------------------------- Docker


@pytest.mark.docker
@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("name", TS_SAMPLES)
def test_sample_results_equal_planted(plan_runner, name):
    sample = samples.get(name)
    run = plan_runner(sample)
    got = statuses(run.report)
    assert got == {k: v.value for k, v in sample.expected.items()}, run.test.output[-3000:]
    assert run.report.consistent, run.report.warnings


@pytest.mark.docker
@pytest.mark.network
@pytest.mark.slow
def test_planted_fix_fails_before_and_passes_after(plan_runner):
    sample = samples.get("ts-vitest")
    task = next(p for p in sample.planted if p.decoy is None)
    before, after = before_and_after(sample, task.commit)
    got_before = statuses(plan_runner(before).report)
    got_after = statuses(plan_runner(after).report)
    for test_id in task.fail_to_pass:
        assert got_before[test_id] == "FAILED" and got_after[test_id] == "PASSED"
    for test_id in task.pass_to_pass:
        assert got_before[test_id] == "PASSED" and got_after[test_id] == "PASSED"


@pytest.mark.docker
@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("name, ids", [
    ("ts-vitest", ["TtlLRU > expiry > peek ignores expired entries",
                   "LRU > get refreshes recency"]),
])
def test_per_test_command_runs_only_the_chosen(docker_engine, tmp_path, name, ids):
    sample = samples.get(name)
    got = run_per_test(sample, tmp_path, ids)
    assert got == {i: sample.expected[i].value for i in ids}
