"""The JavaScript plug-in: the Plan's shape (no Docker), and every JavaScript sample set up
and tested in real containers with per-test results equal to what its generator planted;
a planted fix's FAIL_TO_PASS fails before it and passes after; the per-test template runs
only the chosen tests."""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path

import pytest

from data import samples
from data.samples import Commit, SampleRepo
from envs import images, reports
from envs.models import Language
from envs.sandbox import Sandbox
from repolaunch import languages
from repolaunch.detect import Detection, detect
from repolaunch.languages import Plan
from repolaunch.languages import javascript as js
from tests.repolaunch.conftest import SETUP_LIMITS, statuses

JS_SAMPLES = [s.name for s in samples.all_samples(Language.JAVASCRIPT)]
FORMATS = {"node-test": "tap", "jest": "jest-json", "vitest": "vitest-json",
           "mocha": "mocha-json"}


def det_of(sample: SampleRepo) -> Detection:
    return Detection(primary=sample.language, build_system=sample.build_system,
                     test_framework=sample.test_framework)


def is_test_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return path.startswith(("test/", "tests/", "__tests__/")) or ".test." in name or \
        ".spec." in name


def before_and_after(sample: SampleRepo, index: int) -> tuple[SampleRepo, SampleRepo]:
    """The sample at the fix's parent plus the fix's test files, and the sample at the fix."""
    fix = sample.commits[index]
    tests = {p: c for p, c in fix.files.items() if is_test_file(p)}
    assert tests, f"commit {index} changes no test file"
    before = (*sample.commits[:index], Commit(f"test patch of: {fix.message}", tests,
                                              date=fix.date))
    return (dataclasses.replace(sample, name=sample.name + "-before", commits=before),
            dataclasses.replace(sample, name=sample.name + "-after",
                                commits=sample.commits[: index + 1]))


def run_per_test(sample: SampleRepo, dest: Path, ids: list[str]) -> dict[str, str]:
    """Set the sample up, then run the plan's per-test template on `ids` (network off)."""
    repo = samples.write(sample, dest)
    plan = languages.get(sample.language).plan(repo, det_of(sample))
    command = plan.per_test_command.replace("{tests}", " ".join(shlex.quote(i) for i in ids))
    with Sandbox.start(images.ensure(plan.image_family).tag, network=True, workdir="/testbed",
                       limits=SETUP_LIMITS) as sb:
        sb.put_dir(repo, "/testbed")
        for step in plan.setup_steps:
            res = sb.exec(step, env=plan.env)
            assert res.exit_code == 0, res.output[-2000:]
        snap = sb.snapshot()
        with Sandbox.start(snap.ref, network=False, workdir="/testbed",
                           limits=SETUP_LIMITS) as tb:
            res = tb.exec(command, env=plan.env)
            try:
                data = tb.get_file(plan.report_path)
            except FileNotFoundError:
                data = b""
    report = reports.parse(plan.report_format, data, exit_code=res.exit_code)
    # node's runner reports the tests a name pattern filtered out as skipped
    return {k: v for k, v in statuses(report).items() if v != "SKIPPED" or k in ids}


def check_plan_shape(plan: Plan, sample: SampleRepo, repo: Path) -> None:
    assert plan.image_family == "node"
    assert plan.build_system == sample.build_system
    assert plan.test_framework == sample.test_framework
    assert plan.report_format == FORMATS[sample.test_framework]
    assert plan.report_path and plan.report_path.startswith(js.REPORT_DIR + "/")
    assert plan.report_path in plan.test_command
    assert "{tests}" in plan.per_test_command and plan.report_path in plan.per_test_command
    assert not plan.network_at_test
    assert "package.json" in plan.dependency_files and "package-lock.json" in \
        plan.dependency_files
    assert plan.env.get("CI") == "true"
    date = js.commit_date(repo)
    assert date and date.endswith("Z")
    assert plan.setup_steps == (
        f"npm install --before={date} --no-package-lock --no-audit --no-fund",)
    # nothing outside the tree but node_modules: the sample keeps it out of git clean -fd
    gitignore = (repo / ".gitignore").read_text()
    assert "node_modules/" in gitignore


# --------------------------------------------------------------------------- no Docker


def test_plugin_registered():
    assert "javascript" in languages.names()
    assert isinstance(languages.get("javascript"), js.JavaScriptPlugin)


@pytest.mark.parametrize("name", JS_SAMPLES)
def test_plan_shape(name, tmp_path):
    sample = samples.get(name)
    repo = samples.write(sample, tmp_path)
    plan = languages.get("javascript").plan(repo, det_of(sample))
    assert plan.language is Language.JAVASCRIPT
    check_plan_shape(plan, sample, repo)
    # the plan from detection equals the plan from the sample's declared names
    assert languages.plan(repo, detect(repo)) == plan


def test_samples_cover_the_runners():
    frameworks = {samples.get(n).test_framework for n in JS_SAMPLES}
    assert {"node-test", "jest", "mocha"} <= frameworks
    for name in JS_SAMPLES:
        s = samples.get(name)
        assert len(s.commits) >= 4
        assert "FAILED" in {v.value for v in s.expected.values()}
        assert "SKIPPED" in {v.value for v in s.expected.values()}
        assert any(p.decoy is None and p.fail_to_pass for p in s.planted)


def test_commands_per_framework(tmp_path):
    (tmp_path / "package.json").write_text('{"name": "x"}')
    det = Detection(primary=Language.JAVASCRIPT, build_system="npm")
    for fw, needle in (("jest", "jest --ci --json --outputFile="),
                       ("vitest", "vitest run --reporter=json --outputFile="),
                       ("mocha", "mocha --reporter json --reporter-option output="),
                       ("node-test", "node --test --test-reporter=tap "
                                     "--test-reporter-destination=")):
        plan = js.JavaScriptPlugin().plan(tmp_path, det.model_copy(update={"test_framework": fw}))
        assert needle in plan.test_command, (fw, plan.test_command)
        assert plan.report_format == FORMATS[fw]
    # not a git repository: no date to resolve as of
    assert plan.setup_steps == ("npm install --no-package-lock --no-audit --no-fund",)
    # unknown framework: what the dependencies say, else node's runner
    (tmp_path / "package.json").write_text('{"devDependencies": {"mocha": "^10"}}')
    assert js.JavaScriptPlugin().plan(tmp_path, det).test_framework == "mocha"


@pytest.mark.parametrize("lockfile, step", [
    ("package-lock.json", "npm ci --no-audit --no-fund"),
    ("npm-shrinkwrap.json", "npm ci --no-audit --no-fund"),
    ("yarn.lock", "npx --yes yarn@1 install --frozen-lockfile"),
    ("pnpm-lock.yaml", "npx --yes pnpm@8 install --frozen-lockfile"),
])
def test_lockfile_setup(tmp_path, lockfile, step):
    (tmp_path / "package.json").write_text('{"name": "x"}')
    (tmp_path / lockfile).write_text("{}")
    plan = js.JavaScriptPlugin().plan(tmp_path, Detection(primary=Language.JAVASCRIPT))
    assert plan.setup_steps[0].startswith(step)


def test_script_args_keep_paths_and_drop_reporters():
    def args(script: str, runner: str) -> list[str]:
        return js.script_args({"scripts": {"test": script}}, runner)

    assert args("node --test test/", "node-test") == ["test/"]
    assert args("tsc && node --test --test-reporter=spec build/test", "node-test") == \
        ["build/test"]
    assert args("jest --config jest.config.js --coverage && eslint .", "jest") == \
        ["--config", "jest.config.js"]
    assert args("mocha -R spec 'test/**/*.spec.js'", "mocha") == ["test/**/*.spec.js"]
    assert args("vitest run --reporter verbose src", "vitest") == ["src"]
    assert args("echo \"Error: no test specified\" && exit 1", "jest") == []


def test_per_test_template_is_shell_safe(tmp_path):
    (tmp_path / "package.json").write_text('{"name": "x"}')
    plan = js.JavaScriptPlugin().plan(
        tmp_path, Detection(primary=Language.JAVASCRIPT, test_framework="jest"))
    # the template is valid shell once {tests} is filled with quoted ids
    cmd = plan.per_test_command.replace("{tests}", shlex.quote("a > it's (x)"))
    assert shlex.split(cmd)
    assert '-t "$P"' in cmd


# --------------------------------------------------------------------------- Docker


@pytest.mark.docker
@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("name", JS_SAMPLES)
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
    sample = samples.get("js-node-test")
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
    ("js-node-test", ["camelCase > handles accented letters", "slugify > lowercases"]),
    ("js-mocha", ["stringify sorts keys", "parse decodes plus as space"]),
])
def test_per_test_command_runs_only_the_chosen(docker_engine, tmp_path, name, ids):
    sample = samples.get(name)
    got = run_per_test(sample, tmp_path, ids)
    assert got == {i: sample.expected[i].value for i in ids}
