"""Karma: found behind npm-run-all, run through envfactory's own configuration (headless
Chromium, an inline reporter in mocha's JSON shape, SWE-bench's file scope), Chromium from
Debian at setup. The wrapper configuration is executed by the host's real Node.js against a
repository configuration of the test's own."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from envs import reports
from repolaunch.detect import detect
from repolaunch.languages import javascript as js
from repolaunch.languages import javascript_karma as karma

SCRIPTS = {
    "test": "npm-run-all build lint test:unit",
    "build": "microbundle",
    "lint": "eslint src",
    "test:unit": "run-p test:mocha test:karma",
    "test:mocha": "mocha --recursive --require setup.js test/shared test/node",
    "test:karma": "cross-env COVERAGE=false FLAVOUR=min karma start karma.conf.js --single-run",
}


def write_repo(root: Path, scripts: dict[str, str] = SCRIPTS) -> Path:
    (root / "package.json").write_text(json.dumps({
        "name": "x", "scripts": scripts,
        "devDependencies": {"karma": "^6", "mocha": "^10", "npm-run-all": "^4"}}))
    (root / "karma.conf.js").write_text("module.exports = c => c.set({});\n")
    return root


def test_npm_run_all_names_and_globs_expand():
    scripts = {"test": "npm-run-all --parallel lint 'test:*'", "lint": "eslint .",
               "test:a": "jest", "test:b:c": "mocha", "build": "tsc"}
    out = js.expand_scripts(scripts, scripts["test"])
    # `*` stays within one `:` part, as npm-run-all's globs do; the flag is not a script
    assert out == "eslint . ; jest"
    assert js.expand_scripts(scripts, "run-s build") == "tsc"
    assert js.expand_scripts(scripts, "run-p nothing-such") == "run-p nothing-such"


def test_karma_is_the_runner_behind_npm_run_all(tmp_path):
    repo = write_repo(tmp_path)
    det = detect(repo)
    assert det.test_framework == "karma"
    plan = js.JavaScriptPlugin().plan(repo, det)
    assert plan.test_framework == "karma" and plan.report_format == "mocha-json"
    assert plan.setup_steps[-1] == karma.SETUP_STEP
    assert plan.env["CHROME_BIN"] == "/usr/bin/chromium"
    # the script's own environment is kept; our configuration wraps the repository's
    assert "COVERAGE=false FLAVOUR=min CHROME_BIN=/usr/bin/chromium EF_KARMA_CONF=karma.conf.js" \
        in plan.test_command
    assert "karma start /tmp/envfactory-tests/karma.envfactory.cjs --single-run" \
        in plan.test_command
    assert "EF_KARMA_FILES=" in plan.scope_command and "{tests}" in plan.scope_command
    assert plan.per_test_command == ""


def test_a_test_script_that_builds_first_has_every_run_build_first(tmp_path):
    # karma reads dist/ here, as the maintainer's `npm test` leaves it after `build`
    plan = js.JavaScriptPlugin().plan(write_repo(tmp_path), detect(tmp_path))
    assert "{ npm run build; } && " in plan.test_command
    assert "{ npm run build; } && " in plan.scope_command
    # a build after the tests, or none, is not run first
    assert not js.builds_first({"scripts": {"test": "mocha && npm run build",
                                            "build": "tsc"}}, "mocha")
    assert not js.builds_first({"scripts": {"test": "mocha"}}, "mocha")
    assert js.builds_first({"scripts": {"test": "npm run build && mocha",
                                        "build": "tsc -p ."}}, "mocha")


def test_karma_words_and_config():
    assert karma.karma_words("a && cross-env X=1 karma start k.js --single-run; b") == \
        ["X=1", "karma", "start", "k.js", "--single-run"]
    assert karma.karma_words("mocha test") is None


def test_a_script_that_is_not_the_test_script_can_name_karma(tmp_path):
    repo = write_repo(tmp_path, {"test": "eslint .", "test:browser": "karma start"})
    plan = js.JavaScriptPlugin().plan(repo, detect(repo).model_copy(
        update={"test_framework": "karma"}))
    assert "EF_KARMA_CONF=karma.conf.js" in plan.test_command


REPO_CONF = """
module.exports = function (config) {
  config.set({
    basePath: 'web',
    frameworks: ['mocha'],
    files: ['polyfill.js', {pattern: 'test/**/*.test.js', watched: false}],
    reporters: ['dots'],
  });
};
"""

# Drives the wrapper as karma would: calls it with a config object, then the inline
# reporter with specs, and prints what the configuration became.
DRIVER = """
const wrapper = require(process.argv[2]);
const cfg = {set(o) { Object.assign(this, o); }};
wrapper(cfg);
const plugin = cfg.plugins.find(p => typeof p === 'object')['reporter:envfactory-json'][1];
const r = new plugin();
r.onSpecComplete({}, {suite: ['render()', 'nested'], description: 'works', success: true});
r.onSpecComplete({}, {suite: ['render()'], description: 'breaks', success: false,
                      log: ['Expected 1 to be 2']});
r.onSpecComplete({}, {suite: ['render()'], description: 'later', skipped: true});
r.onSpecComplete({}, {suite: ['render()'], description: 'breaks', success: false});
r.onRunComplete();
console.log(JSON.stringify({basePath: cfg.basePath, files: cfg.files, reporters: cfg.reporters,
                            singleRun: cfg.singleRun, plugins: cfg.plugins.length}));
"""


def test_wrapper_reports_in_mochas_shape_and_keeps_the_repositorys_config(tmp_path):
    (tmp_path / "karma.conf.js").write_text(REPO_CONF)
    wrapper = tmp_path / "out" / "wrapper.cjs"
    wrapper.parent.mkdir()
    wrapper.write_text(karma.WRAPPER_JS)
    (tmp_path / "driver.cjs").write_text(DRIVER)
    report = tmp_path / "out" / "report.json"
    env = {"PATH": "/usr/bin:/bin:/usr/local/bin", "EF_KARMA_CONF": "karma.conf.js",
           "EF_KARMA_REPORT": str(report), "EF_KARMA_FILES": "web/test/a.test.js"}
    out = subprocess.run(["node", "driver.cjs", str(wrapper)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60, check=True)
    seen = json.loads(out.stdout)
    # basePath is the repository config's, resolved there, not the wrapper's folder
    assert seen["basePath"] == str(tmp_path / "web")
    assert seen["reporters"] == ["progress", "envfactory-json"] and seen["singleRun"] is True
    assert seen["plugins"] == 2  # karma-* and ours
    # no minimatch to be had here: the scope cannot be read, so the whole suite runs
    assert seen["files"][0] == "polyfill.js" and len(seen["files"]) == 2
    result = reports.parse("mocha-json", report.read_text())
    got = {t.test_id: t.status.value for t in result.results}
    assert got == {"render() > nested > works": "PASSED", "render() > breaks": "FAILED",
                   "render() > later": "SKIPPED"}


SCOPED_CONF = """
module.exports = function (config) {
  config.set({
    files: ['test/polyfills.js',
            {pattern: '{hooks,compat,}/test/{browser,shared}/**/*.test.js', watched: false}],
  });
};
"""


@pytest.mark.network
def test_the_scope_narrows_the_matching_files_entry_and_keeps_the_rest(tmp_path):
    """With minimatch (every karma install has it), an entry whose glob matches the test
    patch's files is replaced by them, options kept; `{a,}/test` is the repository's own
    test/ folder, not the file system's root."""
    subprocess.run(["npm", "install", "--no-save", "--no-audit", "--no-fund", "minimatch@3"],
                   cwd=tmp_path, check=True, capture_output=True, timeout=300)
    (tmp_path / "karma.conf.js").write_text(SCOPED_CONF)
    wrapper = tmp_path / "wrapper.cjs"
    wrapper.write_text(karma.WRAPPER_JS)
    (tmp_path / "driver.cjs").write_text(DRIVER)
    env = {"PATH": "/usr/bin:/bin:/usr/local/bin", "EF_KARMA_CONF": "karma.conf.js",
           "EF_KARMA_REPORT": str(tmp_path / "report.json")}

    def files(scope: str) -> list:
        out = subprocess.run(["node", "driver.cjs", str(wrapper)], cwd=tmp_path,
                             env={**env, "EF_KARMA_FILES": scope}, capture_output=True,
                             text=True, timeout=60, check=True)
        return json.loads(out.stdout)["files"]

    got = files("test/browser/render.test.js hooks/test/browser/useState.test.js README.md")
    assert got == ["test/polyfills.js",
                   {"pattern": str(tmp_path / "test/browser/render.test.js"), "watched": False},
                   {"pattern": str(tmp_path / "hooks/test/browser/useState.test.js"),
                    "watched": False}]
    # files no entry matches: the whole suite
    assert files("src/index.js") == json.loads(json.dumps(
        ["test/polyfills.js", {"pattern": "{hooks,compat,}/test/{browser,shared}/**/*.test.js",
                               "watched": False}]))


FAKE_KARMA = """#!/bin/sh
# stands in for karma's process: claims what its files list holds, reports one test
printf 'test/shared/a.test.js\\n' > "$EF_KARMA_CLAIMED"
echo '{"passes":[{"title":"a","titlePath":["shared","a"]}],"failures":[],"pending":[]}' \\
  > "$EF_KARMA_REPORT"
"""
FAKE_MOCHA = """#!/bin/sh
# stands in for mocha: records its arguments, reports one failing test
echo "$@" > mocha.args
out=$(printf '%s\\n' "$@" | sed -n 's/^output=//p')
echo '{"passes":[],"failures":[{"title":"b","fullTitle":"node b","err":{"message":"x"}}],
"pending":[]}' > "$out"
exit 1
"""


def test_mocha_beside_karma_takes_only_the_files_karma_leaves(tmp_path):
    """The scope runs karma first; mocha gets the scope's files under its own test paths
    that karma did not claim; both reports merge, and a failure of either is the exit."""
    repo = write_repo(tmp_path)
    for name, text in (("karma", FAKE_KARMA), ("mocha", FAKE_MOCHA)):
        exe = repo / "node_modules" / ".bin" / name
        exe.parent.mkdir(parents=True, exist_ok=True)
        exe.write_text(text)
        exe.chmod(0o755)
    for rel in ("test/shared/a.test.js", "test/node/b.test.js", "src/c.test.js"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("")
    plan = js.JavaScriptPlugin().plan(repo, detect(repo))
    assert "mocha runs beside it" in " ".join(plan.notes)
    report = tmp_path / "out" / "report.json"
    command = (plan.scope_command.replace("/tmp/envfactory-tests", str(tmp_path / "out"))
               .replace("{ npm run build; } && ", "")
               .replace("{tests}", "test/shared/a.test.js test/node/b.test.js src/c.test.js"))
    res = subprocess.run(["bash", "-c", command], cwd=repo, capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 1, res.stderr
    # test/shared is one of mocha's paths too, but karma claimed it; src/ is neither's
    assert (repo / "mocha.args").read_text().split()[-1] == "test/node/b.test.js"
    assert "test/shared/a.test.js" not in (repo / "mocha.args").read_text()
    got = {t.test_id: t.status.value
           for t in reports.parse("mocha-json", report.read_text()).results}
    assert got == {"shared > a": "PASSED", "node b": "FAILED"}
