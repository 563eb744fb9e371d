"""The Go plug-in: the Plan's shape (no Docker), every Go sample built and tested in real
containers with results equal to what its generator planted, and a planted task's
FAIL_TO_PASS failing before its fix and passing after."""

from __future__ import annotations

import re

import pytest

from data import samples
from envs.models import Language, TestStatus
from repolaunch import languages
from repolaunch.detect import Detection
from repolaunch.languages import go
from tests.repolaunch.conftest import before_and_after, detection_of, statuses

GO_SAMPLES = [s.name for s in samples.all_samples(Language.GO)]
# every planted task that is no decoy: (sample, commit index)
REAL_TASKS = [(s.name, p.commit) for s in samples.all_samples(Language.GO)
              for p in s.planted if p.decoy is None]


def test_plugin_registered():
    assert "go" in languages.names()
    assert isinstance(languages.get("go"), go.GoPlugin)


@pytest.mark.parametrize("name", GO_SAMPLES)
def test_plan_shape(name, tmp_path):
    sample = samples.get(name)
    repo = samples.write(sample, tmp_path)
    plan = languages.get("go").plan(repo, detection_of(sample))
    assert plan.language is Language.GO and plan.image_family == "go"
    assert plan.build_system == sample.build_system == "go-modules"
    assert plan.report_format == "gotest-json" and plan.report_path == go.REPORT
    assert plan.test_command.endswith(f"./... > {go.REPORT}")
    assert "go test -json" in plan.test_command and "GOPROXY=off" in plan.test_command
    assert "-count=1" in plan.test_command  # no cached results from another commit
    assert "{tests}" in plan.per_test_command and "-run" in plan.per_test_command
    assert plan.setup_steps[0] == "go mod download"
    assert not any(s.startswith("curl") or "toolchain" in s for s in plan.setup_steps)
    assert "go.sum" in plan.dependency_files and not plan.network_at_test
    assert plan.env["GOTOOLCHAIN"] == "local"


def test_toolchain_by_era(tmp_path):
    (tmp_path / "go.mod").write_text("module example.com/m\n\ngo 1.22.1\n\ntoolchain go1.22.5\n")
    assert go.required_go(tmp_path) == (1, 22, 5)
    plan = go.GoPlugin().plan(tmp_path, Detection(primary=Language.GO))
    step = plan.setup_steps[0]
    assert "golang.org/toolchain/@v/v0.0.1-go1.22.5.linux-amd64.zip" in step
    assert plan.env["PATH"].startswith(go.TOOLCHAIN_DIR + "/bin:")
    (tmp_path / "go.mod").write_text("module example.com/m\n\ngo 1.21\n")
    assert "go1.21.0.linux" in go.GoPlugin().plan(tmp_path, Detection(primary=Language.GO)) \
        .setup_steps[0]
    # older than the proxy's first toolchain, newer than the image's: go1.21's last release
    (tmp_path / "go.mod").write_text("module example.com/m\n\ngo 1.20\n")
    assert "go1.21.13.linux" in go.GoPlugin().plan(tmp_path, Detection(primary=Language.GO)) \
        .setup_steps[0]
    (tmp_path / "go.mod").write_text("module example.com/m\n\ngo 1.19\n")
    assert go.GoPlugin().plan(tmp_path, Detection(primary=Language.GO)).setup_steps[0] \
        == "go mod download"
    (tmp_path / "go.mod").unlink()
    plan = go.GoPlugin().plan(tmp_path, Detection(primary=Language.GO))
    assert plan.build_system == "gopath" and plan.env["GO111MODULE"] == "off"


@pytest.mark.docker
@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("name", GO_SAMPLES)
def test_sample_head_matches_expected(name, plan_runner):
    sample = samples.get(name)
    run = plan_runner(sample)
    got = statuses(run.report)
    assert got == {k: v.value for k, v in sample.expected.items()}, run.test.output[-3000:]
    assert run.report.consistent
    assert run.test.exit_code != 0  # every sample has an intentionally failing test


@pytest.mark.docker
@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("name,index", REAL_TASKS)
def test_planted_fix_fails_before_and_passes_after(name, index, plan_runner):
    sample = samples.get(name)
    task = next(p for p in sample.planted if p.commit == index)
    before, after = before_and_after(sample, task.commit)
    got_before = statuses(plan_runner(before).report)
    got_after = statuses(plan_runner(after).report)
    for test_id in task.fail_to_pass:
        assert got_before.get(test_id) in ("FAILED", "ERROR"), got_before
        assert got_after.get(test_id) == "PASSED", got_after
    for test_id in task.pass_to_pass:
        assert got_before.get(test_id) == got_after.get(test_id) == "PASSED"
    assert set(got_after) == set(task.fail_to_pass) | set(task.pass_to_pass)


@pytest.mark.parametrize("name", [s.name for s in samples.all_samples(Language.GO)])
def test_sample_history(name):
    """A real history: >= 4 commits, dates rising over more than one year, every issue a
    commit message references described, every real task with a FAIL_TO_PASS."""
    sample = samples.get(name)
    dates = [c.date for c in sample.commits]
    assert len(dates) >= 4 and dates == sorted(dates) and dates[0][:4] < dates[-1][:4]
    described = {i.number for i in sample.issues}
    for planted in sample.planted:
        assert 0 < planted.commit < len(sample.commits)
        assert set(planted.issues) <= described
        if planted.decoy is None:
            assert planted.fail_to_pass and set(planted.fail_to_pass).isdisjoint(
                planted.pass_to_pass)
    for index, commit in enumerate(sample.commits):
        refs = {int(n) for n in re.findall(r"Fixes #(\d+)", commit.message)}
        planted = [p for p in sample.planted if p.commit == index]
        assert refs == (set(planted[0].issues) if planted else set()), commit.message
    statuses_at_head = set(sample.expected.values())
    assert {TestStatus.PASSED, TestStatus.FAILED, TestStatus.SKIPPED} <= statuses_at_head


def test_a_scoped_run_tests_the_packages_that_hold_the_files(tmp_path, monkeypatch):
    """SWE-bench's scope: the test patch's files. A Go test file is its directory's package, a
    file under testdata/ the package above that directory (the go tool ignores testdata; its
    package's tests read it); other files say nothing, and with no package named every
    package runs."""
    import os
    import subprocess

    from repolaunch.validate import scoped_command

    plan = languages.get("go").plan(tmp_path, Detection(primary=Language.GO))
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "go").write_text('#!/bin/sh\necho "go $*"\n')
    (bindir / "go").chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}"}

    def run(*files: str) -> str:
        cmd = scoped_command(plan.scope_command, list(files)).replace(go.REPORT, "/dev/stdout")
        return subprocess.run(["bash", "-c", cmd], cwd=tmp_path, env=env, capture_output=True,
                              text=True, check=True).stdout.strip()

    assert run("binding/header_test.go", "binding/testdata/h.golden", "render/a_test.go",
               "binding/query_test.go") == "go test -json -count=1 ./binding ./render"
    assert run("gin_test.go") == "go test -json -count=1 ./."
    assert run("promql/parser/lex_test.go", "promql/testdata/operators.test") == (
        "go test -json -count=1 ./promql ./promql/parser")
    assert run("a/testdata/b/testdata/x.txt") == "go test -json -count=1 ./a"
    assert run("testdata/only.golden") == "go test -json -count=1 ./."
    assert run("docs/notes.md") == "go test -json -count=1 ./..."
