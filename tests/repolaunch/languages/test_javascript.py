"""The JavaScript plug-in runs the tests: the Plan's shape and its test, per-test and scope
commands for each runner (no Docker), and every JavaScript sample set up and tested in real
containers with per-test results equal to what its generator planted; a planted fix's
FAIL_TO_PASS fails before it and passes after; the per-test template runs only the chosen
tests. How it sets a repository up (Node by era, package managers, lockfiles, build steps)
is test_javascript_setup.py's."""

from __future__ import annotations

import dataclasses
import json
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


def run_per_test(sample: SampleRepo, dest: Path, ids: list[str],
                 template: str = "per_test_command") -> dict[str, str]:
    """Set the sample up, then run the plan's per-test template (or `template`, another
    of the plan's) on `ids` (network off)."""
    repo = samples.write(sample, dest)
    plan = languages.get(sample.language).plan(repo, det_of(sample))
    command = getattr(plan, template).replace("{tests}", " ".join(shlex.quote(i) for i in ids))
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
    # no install waits on a browser download from a host out of reach
    assert plan.env["PUPPETEER_SKIP_DOWNLOAD"] == plan.env["PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD"] == "1"
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


def plan_for(tmp_path: Path, package: dict, framework: str | None = None) -> Plan:
    import json

    (tmp_path / "package.json").write_text(json.dumps(package))
    det = Detection(primary=Language.JAVASCRIPT, build_system="npm", test_framework=framework)
    return js.JavaScriptPlugin().plan(tmp_path, det)


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
    # node's own options before --test are kept (a loader the tests need)
    assert args("node --import tsx --test test/", "node-test") == ["--import", "tsx", "test/"]
    assert args("node x.js && c8 node --test", "node-test") == []
    assert args("ava --verbose --tap test/*.js", "ava") == ["test/*.js"]
    assert args("tap --reporter=spec -R classic test", "tap") == ["test"]


def test_per_test_template_is_shell_safe(tmp_path):
    (tmp_path / "package.json").write_text('{"name": "x"}')
    plan = js.JavaScriptPlugin().plan(
        tmp_path, Detection(primary=Language.JAVASCRIPT, test_framework="jest"))
    # the template is valid shell once {tests} is filled with quoted ids
    cmd = plan.per_test_command.replace("{tests}", shlex.quote("a > it's (x)"))
    assert shlex.split(cmd)
    assert '-t "$P"' in cmd


@pytest.mark.parametrize("script, fw, needle", [
    # escape-string-regexp: linters and type tests around the runner
    ("xo && ava && tsd", "ava", "./node_modules/.bin/ava --tap > "),
    # dotenv: node-tap 18+ with a run subcommand and its own flags
    ("npm run lint && tap run tests/**/*.js --disable-coverage --timeout=60000", "tap",
     "./node_modules/.bin/tap --reporter=tap run tests/**/*.js --disable-coverage "
     "--timeout=60000 > "),
    ("tap -R spec test/*.js", "tap", "./node_modules/.bin/tap --reporter=tap test/*.js > "),
    ("tape 'test/**/*.js' | tap-spec", "tape", "./node_modules/.bin/tape 'test/**/*.js' > "),
])
def test_tap_emitting_runners(tmp_path, script, fw, needle):
    plan = plan_for(tmp_path, {"scripts": {"test": script}}, fw)
    assert plan.test_framework == fw
    assert plan.report_format == "tap"
    assert plan.report_path == f"{js.REPORT_DIR}/report.tap"
    assert needle + plan.report_path in plan.test_command, plan.test_command
    if fw == "tape":  # tape has no name filter
        assert plan.per_test_command == ""
        assert any("no per-test" in n for n in plan.notes)
    else:
        assert "{tests}" in plan.per_test_command
        assert plan.report_path in plan.per_test_command
    assert not any("node --test" in n for n in plan.notes)


def test_runner_from_dependencies_when_detection_names_none(tmp_path):
    for dep in ("ava", "tap", "tape"):
        plan = plan_for(tmp_path, {"devDependencies": {dep: "*"}})
        assert plan.test_framework == dep and plan.report_format == "tap"


def test_unknown_runner_is_noted_and_node_test_still_tried(tmp_path):
    plan = plan_for(tmp_path, {"scripts": {"test": "lab -t 100"}})
    assert plan.test_framework == "node-test"
    assert plan.test_command.split("&& ")[-1].startswith("node --test")
    assert any("names no test runner" in n and "lab -t 100" in n for n in plan.notes)
    # a runner detection knows but that has no plan: named in the note
    plan = plan_for(tmp_path, {"scripts": {"test": "uvu tests"},
                                "devDependencies": {"uvu": "*", "tap": "*"}}, "uvu")
    assert plan.test_framework == "node-test"
    assert any("uvu" in n and "node --test" in n for n in plan.notes)
    # node's own runner: no note
    plan = plan_for(tmp_path, {"scripts": {"test": "node --test test/"}})
    assert not any("runner" in n for n in plan.notes)


@pytest.mark.parametrize("fw", ["jest", "vitest"])
def test_jest_and_vitest_pass_with_no_tests(tmp_path, fw):
    plan = plan_for(tmp_path, {"scripts": {"test": f"{fw} --passWithNoTests"}}, fw)
    assert plan.test_command.count("--passWithNoTests") == 1
    assert plan.per_test_command.count("--passWithNoTests") == 1


def test_unquoted_globs_stay_unquoted(tmp_path):
    # ts-extras: node 18 does not expand globs; the shell must, as it does for npm test
    pkg = {"scripts": {"test": "node --test --import=tsx/esm test/*.ts && tsc --project test"}}
    args = js.script_args(pkg, "node-test")
    assert args == ["--import=tsx/esm", "test/*.ts"]
    plan = plan_for(tmp_path, pkg, "node-test")
    assert plan.test_command.endswith(" --import=tsx/esm test/*.ts")
    assert plan.per_test_command.endswith(" --import=tsx/esm test/*.ts")
    # a quoted glob is the runner's to expand: it stays quoted
    assert js.shell_words(js.script_args({"scripts": {"test": "mocha 'test/**/*.js'"}},
                                         "mocha")) == "'test/**/*.js'"
    # a glob next to quoted text keeps the text quoted as written
    words = js.split_script('node --test "my dir"/*.test.js x\\ y')
    assert words == ["node", "--test", "my dir/*.test.js", "x y"]
    assert js.shell_words(words[2:]) == "\"my dir\"/*.test.js 'x y'"
    # a word with other shell syntax is quoted whole (no command substitution sneaks in)
    assert js.shell_words(js.split_script('"$(id)"*.js')) == "'$(id)*.js'"
    # the split agrees with shlex where there are no globs
    for script in ("jest --config 'a b.js' -t \"x y\"", "mocha a\\ b 'c'd"):
        assert js.split_script(script) == shlex.split(script)
    with pytest.raises(ValueError):
        js.split_script("mocha 'unclosed")


def test_glob_expansion_runs_in_the_shell(tmp_path):
    # the kept-raw word really expands, the quoted one does not
    import subprocess

    for name in ("a.test.ts", "b.test.ts"):
        (tmp_path / name).write_text("")
    words = js.split_script("node --test *.test.ts '*.test.ts'")
    out = subprocess.run(f"printf '%s\\n' {js.shell_words(words[2:])}", shell=True,
                         cwd=tmp_path, capture_output=True, text=True).stdout.split()
    assert out == ["a.test.ts", "b.test.ts", "*.test.ts"]


def test_ava_per_test_template_passes_titles_as_match_words(tmp_path):
    import subprocess

    bindir = tmp_path / "node_modules" / ".bin"
    bindir.mkdir(parents=True)
    (bindir / "ava").write_text('#!/bin/sh\nfor a in "$@"; do echo "[$a]"; done\n')
    (bindir / "ava").chmod(0o755)
    _, per_test, _ = js.runner_commands("ava", js.split_script("test/*.js"),
                                        str(tmp_path / "r.tap"))
    ids = ["test › it's $HOME \"x\"", "suite > plain"]
    cmd = per_test.replace("{tests}", " ".join(shlex.quote(i) for i in ids))
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "a.js").write_text("")
    subprocess.run(cmd, shell=True, cwd=tmp_path, check=True)
    assert (tmp_path / "r.tap").read_text().splitlines() == [
        "[--tap]", "[--match]", "[it's $HOME \"x\"]", "[--match]", "[plain]", "[test/a.js]"]


def test_the_test_script_is_followed_through_the_scripts_it_runs(tmp_path):
    """`"test": "npm run tests-only"` runs what tests-only says: its runner and its files."""
    scripts = {"test": "npm run lint && npm run --silent tests-only",
               "lint": "eslint .", "tests-only": "nyc tape 'test/**/*.js'",
               "postinstall": "yarn build", "build": "tsc"}
    pkg = {"scripts": scripts, "devDependencies": {"tape": "^5", "nyc": "^15"}}
    assert js.test_script(pkg) == "eslint . && nyc tape 'test/**/*.js'"
    assert js.shell_words(js.script_args(pkg, "tape")) == "'test/**/*.js'"
    # the package manager's own commands and the test script itself are left alone
    assert js.expand_scripts(scripts, "yarn install && npm test") == "yarn install && npm test"
    assert js.expand_scripts(scripts, "pnpm build") == "tsc"
    (tmp_path / "package.json").write_text(json.dumps(pkg))
    det = detect(tmp_path)
    assert det.test_framework == "tape"
    assert det.extra["test_script"] == "eslint . && nyc tape 'test/**/*.js'"


def test_a_fixture_in_the_scope_stands_for_the_tests_beside_its_fixtures_directory(tmp_path):
    """babel's test patches add fixtures (test/fixtures/misc/x/input.js) that no runner
    collects: the scope runs the test directory that holds them, not the whole suite."""
    import subprocess

    report = tmp_path / "report.json"
    (tmp_path / "pkg" / "test" / "fixtures" / "misc").mkdir(parents=True)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.test.js").write_text("")
    jest = tmp_path / "node_modules" / ".bin" / "jest"
    jest.parent.mkdir(parents=True)
    # a stand-in runner: it records its arguments and reports one test
    jest.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path}/args\n'
                    f"echo '{{\"numTotalTests\": 1}}' > {report}\n")
    jest.chmod(0o755)
    scope = js.scope_command("jest", [], str(report))
    files = ("pkg/test/fixtures/misc/new/input.js pkg/test/fixtures/misc/new/output.js "
             "src/a.test.js README.md")
    res = subprocess.run(["sh", "-c", scope.replace("{tests}", files)], cwd=tmp_path,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    (args,) = (tmp_path / "args").read_text().splitlines()
    assert args.split()[-2:] == ["pkg/test/", "src/a.test.js"]


def test_a_workspace_root_without_a_test_script_runs_its_packages_suites(tmp_path):
    """The runner the packages' test scripts name, from the root, over each package's test
    paths (its directory when the script names none); options and config files stay out."""
    (tmp_path / "package.json").write_text(json.dumps(
        {"name": "root", "private": True, "devDependencies": {"vitest": "^3"},
         "scripts": {"release:check": "node --test scripts/x.test.mjs"}}))
    (tmp_path / "pnpm-workspace.yaml").write_text("packages:\n  - 'packages/*'\n")
    for name, script in (("core", "pnpm run test:unit"), ("poly", "vitest --run"),
                         ("docs", None)):
        d = tmp_path / "packages" / name
        (d / "src").mkdir(parents=True)
        scripts = {"test": script, "test:unit": "node check.mjs && vitest --run src "
                   "--config vitest.other.config.ts"} if script else {}
        (d / "package.json").write_text(json.dumps({"name": name, "scripts": scripts}))
    (tmp_path / "packages" / "core" / "vitest.other.config.ts").write_text("export default 1\n")
    det = detect(tmp_path)
    assert det.test_framework == "vitest"  # not node's, from the root's release script
    plan = js.JavaScriptPlugin().plan(tmp_path, det)
    assert plan.test_command.endswith("--passWithNoTests packages/core/src packages/poly")
    assert any("no test script" in n and "packages/core, packages/poly" in n
               for n in plan.notes), plan.notes


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


@pytest.mark.docker
@pytest.mark.network
@pytest.mark.slow
def test_scope_runs_the_test_files_given_and_the_suite_when_they_select_nothing(
        docker_engine, tmp_path):
    """SWE-bench runs the test patch's files: Jest gets them as path filters; files that
    select no test (a source file here) run the whole suite rather than nothing."""
    sample = samples.get("js-jest")
    got = run_per_test(sample, tmp_path / "a", ["test/cart.test.js"], "scope_command")
    assert got and set(got) < set(sample.expected)
    assert all(i.startswith(("cartTotal", "applyDiscount")) for i in got), got
    whole = run_per_test(sample, tmp_path / "b", ["src/money.js"], "scope_command")
    # (the helper leaves out skipped tests not asked for)
    assert whole == {i: v.value for i, v in sample.expected.items() if v.value != "SKIPPED"}
