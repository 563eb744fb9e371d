"""The Python plug-in: the Plan's shape (no Docker), every Python sample built and tested
in real containers with results equal to what its generator planted, a planted task's
FAIL_TO_PASS failing before its fix and passing after, and the time machine."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess

import pytest

from data import samples
from envs.models import Language, TestStatus
from repolaunch import languages
from repolaunch.detect import Detection
from repolaunch.languages import python as py
from tests.repolaunch.conftest import before_and_after, detection_of, statuses

PY_SAMPLES = [s.name for s in samples.all_samples(Language.PYTHON)]
# every planted task that is no decoy: (sample, commit index)
REAL_TASKS = [(s.name, p.commit) for s in samples.all_samples(Language.PYTHON)
              for p in s.planted if p.decoy is None]


# --------------------------------------------------------------------------- plan shape


def test_plugin_registered():
    assert "python" in languages.names()
    assert isinstance(languages.get("python"), py.PythonPlugin)


@pytest.mark.parametrize("name", PY_SAMPLES)
def test_plan_shape(name, tmp_path):
    sample = samples.get(name)
    repo = samples.write(sample, tmp_path)
    plan = languages.get("python").plan(repo, detection_of(sample))
    assert plan.language is Language.PYTHON and plan.image_family == "python"
    assert plan.build_system == sample.build_system
    assert plan.report_format == "junit:pytest" and plan.report_path == py.REPORT
    assert py.REPORT in plan.test_command and "junit_family=xunit1" in plan.test_command
    assert plan.per_test_command.endswith("{tests}")
    assert plan.per_test_command.replace(" {tests}", "") == plan.test_command
    assert plan.env["PATH"].startswith(f"{py.VENV}/bin:")
    assert not plan.env["PYTHONPATH"].startswith("/opt")  # the checkout comes first
    assert any("uv pip install" in s for s in plan.setup_steps)
    assert any(py.RESOLVED in s for s in plan.setup_steps)
    assert "pyproject.toml" in plan.dependency_files and "setup.py" in plan.dependency_files
    assert not plan.network_at_test
    # no per-repository configuration: no step names the sample
    assert not any(sample.name in s for s in (*plan.setup_steps, plan.test_command))
    # the time machine is on by default, as of HEAD's commit date
    head = py.to_utc(sample.commits[-1].date)
    assert any(f"--exclude-newer {head}" in s for s in plan.setup_steps)
    assert any(head in n for n in plan.notes)


def test_plan_details(tmp_path):
    textkit = samples.write(samples.get("py-textkit"), tmp_path)
    plan = py.PythonPlugin().plan(textkit, detection_of(samples.get("py-textkit")))
    assert plan.env["PYTHONPATH"] == "/testbed/src:/testbed"  # src layout
    install = next(s for s in plan.setup_steps if "uv pip install" in s)
    assert "-e '.[test]'" in install and "pytest" in install
    # 2024, names 3.8+: the default interpreter (3.11), resolved as of the commit
    assert plan.suite == "bookworm" and any("Python 3.11" in n for n in plan.notes)

    verlib = samples.write(samples.get("py-verlib"), tmp_path)
    plan = py.PythonPlugin().plan(verlib, detection_of(samples.get("py-verlib")))
    assert plan.env["PYTHONPATH"] == "/testbed"
    install = next(s for s in plan.setup_steps if "uv pip install" in s)
    assert "-e . " in install and "pytest setuptools wheel" in install
    # late 2021: 3.11 did not exist yet, so the era's interpreter, 3.9 (bullseye)
    assert plan.suite == "bullseye" and "# python: 3.9" in install
    assert plan.test_framework == "unittest"
    assert "{tests}" in plan.check_command and "--collect-only" in plan.check_command


def test_install_narrows_instead_of_giving_up(tmp_path):
    """The script tries everything at once; else the project with its test extras (else
    alone) and each other source on top, kept if it installs; else without build
    isolation, then setup.py develop; and it records the set and the day in a header."""
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\nsetup(name='x', extras_require={'test': ['pytest'],"
        " 'all': ['numpy']})\n")
    (tmp_path / "requirements-test.txt").write_text("mock\n")
    plan = py.PythonPlugin().plan(tmp_path, Detection(primary=Language.PYTHON),
                                  resolve_date="2022-06-01")
    install = next(s for s in plan.setup_steps if "uv pip install" in s)
    order = [install.index(x) for x in (
        "'everything for tests'", "-e '.[test,all]'", "'the project with its test extras'",
        "'the project alone'", "adding \"requirements-test.txt", "adding \"'extra [all]'",
        "--no-build-isolation", "setup.py -q develop")]
    assert order == sorted(order)
    assert "\nmock\nENVFACTORY_REQS" in install
    assert 'TM="--exclude-newer 2022-06-01T00:00:00Z"' in install
    assert "# resolved as of ${TM##* }" in install and "# set: $ok$kept" in install
    # python 3.9 for a 2022 project that declares nothing: setuptools comes with the venv
    assert "pytest setuptools wheel" in install
    # an add-on that does not install whole goes in piece by piece: a requirement file line
    # by line, an extra by the requirements the installed project declares for it
    assert "importlib.metadata" in install and "/opt/envfactory/venv/bin/python -c" in install
    assert " x all > /tmp/envfactory-extra.txt" in install
    # when the runner cannot start with all that (an optional package that breaks the
    # project's own import), the build falls back on a fresh venv with the core sets only
    venv, narrow, freeze = plan.fallback_steps
    assert venv.startswith("rm -rf /opt/envfactory/venv") and "uv venv" in venv
    assert "'everything for tests'" not in narrow and "adding" not in narrow
    assert "'the project with its test extras'" in narrow and freeze == plan.setup_steps[-1]


def test_time_machine_switch(tmp_path, monkeypatch):
    sample = samples.get("py-verlib")
    repo = samples.write(sample, tmp_path)
    plugin = py.PythonPlugin()
    explicit = plugin.plan(repo, detection_of(sample), resolve_date="2021-06-01")
    assert any("--exclude-newer 2021-06-01T00:00:00Z" in s for s in explicit.setup_steps)
    latest = plugin.plan(repo, detection_of(sample), resolve_date=None)
    assert not any("--exclude-newer" in s for s in latest.setup_steps)
    monkeypatch.setenv(py.TIME_MACHINE_ENV, "0")
    assert not py.time_machine_enabled()
    off = plugin.plan(repo, detection_of(sample))
    assert not any("--exclude-newer" in s for s in off.setup_steps)
    assert any("time machine off" in n for n in off.notes)


def test_parse_resolved():
    text = ("# resolved as of 2021-11-02T10:20:00Z\nattrs==21.2.0\nPackaging==21.2\n"
            "verlib @ file:///testbed\n-e file:///testbed\nUsing Python 3.11.2 environment\n")
    assert py.parse_resolved(text) == {"attrs": "21.2.0", "packaging": "21.2"}


def test_build_system_fallbacks(tmp_path):
    (tmp_path / "requirements-dev.txt").write_text("pytest\n")
    (tmp_path / "requirements.txt").write_text("attrs\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "requirements.txt").write_text("sphinx\n")
    assert py.build_system(tmp_path) == "requirements"
    assert py.requirement_files(tmp_path) == ["requirements-dev.txt", "requirements.txt"]
    plan = py.PythonPlugin().plan(tmp_path, Detection(primary=Language.PYTHON),
                                  resolve_date=None)
    install = next(s for s in plan.setup_steps if "uv pip install" in s)
    reqs = install.split("<<'ENVFACTORY_REQS'\n")[1].split("\nENVFACTORY_REQS")[0]
    assert reqs.splitlines() == ["pytest", "attrs"] and "sphinx" not in install
    assert " -e " not in install  # nothing to install as a project
    assert py.to_utc("2021-03-04T05:06:07+02:00") == "2021-03-04T03:06:07Z"
    assert py.commit_date(tmp_path) is None  # not a git checkout

    empty = tmp_path / "empty"
    empty.mkdir()
    assert py.build_system(empty) == "plain"
    (empty / "setup.cfg").write_text("[options.extras_require]\ntesting = pytest\n")
    assert py.build_system(empty) == "setuptools"
    plan = py.PythonPlugin().plan(empty, Detection(primary=Language.PYTHON))
    assert any("'.[testing]'" in s for s in plan.setup_steps)


# --------------------------------------------------------------------------- in containers


@pytest.mark.docker
@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("name", PY_SAMPLES)
def test_sample_head_matches_expected(name, plan_runner):
    sample = samples.get(name)
    run = plan_runner(sample)
    got = statuses(run.report)
    assert got == {k: v.value for k, v in sample.expected.items()}, run.test.output[-3000:]
    assert run.report.consistent
    assert run.test.exit_code != 0  # every sample has an intentionally failing test
    freeze = run.setup[-1].output
    assert "pytest==" in freeze


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


@pytest.mark.docker
@pytest.mark.network
@pytest.mark.slow
def test_time_machine_old_commit_needs_the_world_of_its_day(plan_runner, monkeypatch):
    """py-verlib uses packaging.version.LegacyVersion, removed in packaging 22.0: resolved
    as of its commit date its tests pass; with today's packages they fail."""
    sample = samples.get("py-verlib")
    with_tm = plan_runner(sample)
    assert statuses(with_tm.report) == {k: v.value for k, v in sample.expected.items()}
    resolved = py.parse_resolved(with_tm.setup[-1].output)
    assert resolved["packaging"].startswith("21."), resolved
    assert "verlib" not in resolved  # the project itself is not a resolved dependency

    monkeypatch.setenv(py.TIME_MACHINE_ENV, "0")
    without = plan_runner(dataclasses.replace(sample, name="py-verlib-latest"))
    resolved = py.parse_resolved(without.setup[-1].output)
    assert int(resolved["packaging"].split(".")[0]) >= 22, resolved
    got = statuses(without.report)
    passed_with_tm = [t for t, s in sample.expected.items() if s is TestStatus.PASSED]
    assert not any(got.get(t) == "PASSED" for t in passed_with_tm), got
    assert any(s in ("FAILED", "ERROR") for s in got.values()), got
    assert without.test.exit_code != 0


@pytest.mark.parametrize("name", [s.name for s in samples.all_samples(Language.PYTHON)])
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


def test_a_tagless_checkout_of_a_vcs_versioned_project_gets_a_pretend_version(tmp_path):
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True,
                       env={**os.environ, "GIT_COMMITTER_DATE": "2022-01-01T00:00:00Z"})

    (tmp_path / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools", "setuptools_scm"]\n'
        '[project]\nname = "p"\ndynamic = ["version"]\n[tool.setuptools_scm]\n')
    git("init", "-q")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    notes: list[str] = []
    assert py.vcs_version_env(tmp_path, notes) == {
        "SETUPTOOLS_SCM_PRETEND_VERSION": "0.0.0", "PBR_VERSION": "0.0.0",
        "POETRY_DYNAMIC_VERSIONING_BYPASS": "0.0.0"}
    git("tag", "v1.4.2")
    assert py.vcs_version_env(tmp_path, []) == {}  # a reachable tag: git knows the version
    plan = py.PythonPlugin().plan(tmp_path, Detection(primary=Language.PYTHON))
    assert "SETUPTOOLS_SCM_PRETEND_VERSION" not in plan.env
