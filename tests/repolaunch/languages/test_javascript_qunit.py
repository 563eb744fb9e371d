"""QUnit under Node.js: found by its packages, the test script run as written with a
preloaded hook that writes TAP. The plan's own test command runs here with the host's real
Node.js, against a QUnit-shaped module of the test's own (its `test`, `module`, `testDone`
as QUnit's are; the tests run synchronously when the file is loaded)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from envs import reports
from repolaunch.detect import detect
from repolaunch.languages import javascript as js

# QUnit's shape: `module`, `test` (options `skip`, `todo`), `testDone` with QUnit's details;
# the tests run when the process is about to exit.
MINI_QUNIT = """\
const tests = [], done = []; let current = '';
const QUnit = {
  module(name) { current = name; },
  test(name, fn, opts = {}) { tests.push({module: current, name, fn, opts}); },
  testDone(cb) { done.push(cb); },
};
process.on('beforeExit', () => {
  while (tests.length) {
    const t = tests.shift(); let failed = 0, passed = 0;
    if (!t.opts.skip) t.fn({ok: v => (v ? passed++ : failed++)});
    for (const cb of done) cb({module: t.module, name: t.name, failed, passed,
                               total: failed + passed, skipped: !!t.opts.skip,
                               todo: !!t.opts.todo});
  }
});
module.exports = QUnit;
"""

SUITE = """\
const QUnit = require('qunit-extras');
QUnit.module('lodash.add');
QUnit.test('should add two numbers', a => a.ok(1 + 1 === 2));
QUnit.test('should # not coerce', a => a.ok(false));
QUnit.module('chunk > nested');
QUnit.test('skipped one', a => a.ok(true), {skip: true});
QUnit.test('known bug', a => a.ok(false), {todo: true});
"""


def write_repo(root: Path, script: str = "node test/test && node test/test-fp") -> Path:
    (root / "package.json").write_text(json.dumps({
        "name": "x", "scripts": {"test": "npm run test:main && npm run test:fp",
                                 "test:main": script.split(" && ")[0],
                                 "test:fp": script.split(" && ")[-1]},
        "devDependencies": {"qunit-extras": "^3", "qunitjs": "^2"}}))
    (root / "test").mkdir()
    (root / "test" / "test.js").write_text(SUITE)
    (root / "test" / "test-fp.js").write_text(
        "const Q = require('qunit-extras');\nQ.module('fp');\nQ.test('curries', a => a.ok(1));\n")
    lib = root / "node_modules" / "qunit-extras"
    lib.mkdir(parents=True)
    (lib / "index.js").write_text(MINI_QUNIT)
    return root


def test_qunit_is_found_by_its_packages_and_has_no_per_test_command(tmp_path):
    repo = write_repo(tmp_path)
    det = detect(repo)
    assert det.test_framework == "qunit"
    plan = js.JavaScriptPlugin().plan(repo, det)
    assert plan.test_framework == "qunit" and plan.report_format == "tap"
    assert "node test/test && node test/test-fp" in plan.test_command
    assert plan.per_test_command == "" and plan.scope_command == ""


def test_the_hook_writes_a_tap_line_per_test_of_every_node_process(tmp_path):
    repo = write_repo(tmp_path)
    plan = js.JavaScriptPlugin().plan(repo, detect(repo))
    report = tmp_path / "report.tap"
    command = plan.test_command.replace(plan.report_path, str(report))
    out = subprocess.run(["sh", "-c", command], cwd=repo, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    got = {r.test_id: r.status.value for r in
           reports.parse("tap", report.read_text(), exit_code=out.returncode).results}
    assert got == {
        "lodash.add > should add two numbers": "PASSED",
        "lodash.add > should # not coerce": "FAILED",  # '#' escaped: not a directive
        "chunk > nested > skipped one": "SKIPPED",
        "chunk > nested > known bug": "XFAIL",
        "fp > curries": "PASSED",  # the second node process appends
    }
