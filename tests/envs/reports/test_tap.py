"""TAP: node --test (nested subtests), prove, tape."""

from __future__ import annotations

import pytest

from envs import reports
from envs.reports import ReportParseError

from ._helpers import F, P, S, X, statuses

NODE_TEST = """\
TAP version 13
# Subtest: math
    # Subtest: adds
    ok 1 - adds
      ---
      duration_ms: 0.512
      ...
    # Subtest: divides by zero
    not ok 2 - divides by zero
      ---
      duration_ms: 0.8
      location: '/app/test/math.test.js:10:3'
      failureType: 'testCodeFailure'
      error: |-
        Expected values to be strictly equal:

        1 !== 2

      code: 'ERR_ASSERTION'
      name: 'AssertionError'
      stack: |-
        TestContext.<anonymous> (file:///app/test/math.test.js:12:12)
        ok 99 - this is a stack line, not a test
      ...
    # Subtest: nested suite
        # Subtest: deep \\# hash
        ok 1 - deep \\# hash
          ---
          duration_ms: 0.1
          ...
        1..1
    ok 3 - nested suite
      ---
      duration_ms: 0.3
      type: 'suite'
      ...
    # Subtest: later
    ok 4 - later # SKIP not yet
      ---
      duration_ms: 0.01
      ...
    # Subtest: todo thing
    not ok 5 - todo thing # TODO fix \\#42
      ---
      duration_ms: 0.02
      ...
    1..5
not ok 1 - math
  ---
  duration_ms: 3
  type: 'suite'
  location: '/app/test/math.test.js:3:1'
  failureType: 'subtestsFailed'
  error: '1 subtest failed'
  code: 'ERR_TEST_FAILURE'
  ...
# Subtest: hooks
    # Subtest: inner ok
    ok 1 - inner ok
      ---
      duration_ms: 0.1
      ...
    1..1
not ok 2 - hooks
  ---
  duration_ms: 1
  type: 'suite'
  failureType: 'hookFailed'
  error: 'after hook failed'
  ...
# Subtest: top level ünïcode [brackets] > arrows
ok 3 - top level ünïcode [brackets] > arrows
  ---
  duration_ms: 0.2
  ...
1..3
# tests 7
# suites 3
# pass 4
# fail 1
# cancelled 0
# skipped 1
# todo 1
# duration_ms 40
"""

# prove -v: Test::More diagnostics go to stderr, shown here interleaved as a terminal would
PROVE = """\

#   Failed test 'parses dates'
#   at t/basic.t line 3.

    #   Failed test 'inner b'
    #   at t/basic.t line 5.
    # Looks like you failed 1 test of 2.
t/basic.t ..\x20
1..4
ok 1 - loads
not ok 2 - parses dates
ok 3 # skip no network
# Subtest: grouped # things
    1..2
    ok 1 - inner a
    not ok 2 - inner b
not ok 4 - grouped \\# things
Dubious, test returned 2 (wstat 512, 0x200)
Failed 2/4 subtests\x20
\t(less 1 skipped subtest: 1 okay)
t/died.t ..\x20
1..3
ok 1 - starts
Dubious, test returned 255 (wstat 65280, 0xff00)
Failed 2/3 subtests\x20
t/extra.t ..\x20
1..1
ok 1 - fine
ok
t/slow.t ... skipped: needs SLOW=1

Test Summary Report
-------------------
t/basic.t (Wstat: 512 (exited 2) Tests: 4 Failed: 2)
  Failed tests:  2, 4
  Non-zero exit status: 2
Files=4, Tests=6,  0 wallclock secs ( 0.02 usr  0.01 sys +  0.06 cusr  0.03 csys =  0.12 CPU)
Result: FAIL
"""

# prove without -v: only each file's verdict
PROVE_QUIET = """\
t/basic.t ..\x20
Dubious, test returned 2 (wstat 512, 0x200)
Failed 2/4 subtests\x20
\t(less 1 skipped subtest: 1 okay)
t/extra.t .. ok
t/slow.t ... skipped: needs SLOW=1

Test Summary Report
-------------------
t/basic.t (Wstat: 512 (exited 2) Tests: 4 Failed: 2)
  Failed tests:  2, 4
  Non-zero exit status: 2
Files=3, Tests=5,  1 wallclock secs ( 0.02 usr  0.01 sys +  0.06 cusr  0.02 csys =  0.11 CPU)
Result: FAIL
"""

TAPE = """\
TAP version 13
# beep
ok 1 should be equal
ok 2 should be equivalent
# boop
not ok 3 should be truthy
  ---
    operator: ok
    expected: true
    actual:   false
    at: Test.<anonymous> (/app/test.js:10:5)
  ...

1..3
# tests 3
# pass  2
# fail  1
"""

# node 18 (and node-tap) wrap each file's tests in a subtest named by the file
NODE_18_FILES = """\
TAP version 13
# Subtest: /testbed/test/slug.test.js
    # Subtest: one word
    ok 1 - one word
      ---
      duration_ms: 0.5
      ...
    # Subtest: many words
    not ok 2 - many words
      ---
      duration_ms: 0.7
      failureType: 'testCodeFailure'
      error: |-
        Expected values to be strictly equal:
      code: 'ERR_ASSERTION'
      ...
    1..2
not ok 1 - /testbed/test/slug.test.js
  ---
  duration_ms: 40
  failureType: 'subtestsFailed'
  exitCode: 1
  error: '1 subtest failed'
  code: 'ERR_TEST_FAILURE'
  ...
# Subtest: /testbed/test/broken.test.js
not ok 2 - /testbed/test/broken.test.js
  ---
  duration_ms: 30
  failureType: 'testCodeFailure'
  exitCode: 1
  error: 'test failed'
  code: 'ERR_TEST_FAILURE'
  ...
1..2
"""

NODE_20_FILES = """\
TAP version 13
# Subtest: one word
ok 1 - one word
  ---
  duration_ms: 0.5
  ...
# Subtest: many words
not ok 2 - many words
  ---
  duration_ms: 0.7
  location: '/testbed/test/slug.test.js:6:1'
  failureType: 'testCodeFailure'
  error: |-
    Expected values to be strictly equal:
  code: 'ERR_ASSERTION'
  ...
1..2
"""

SAMPLES = [
    ("tap", NODE_TEST),
    ("tap", PROVE),
    ("tap", PROVE_QUIET),
    ("tap", TAPE),
    ("tap", NODE_18_FILES),
    ("tap", NODE_20_FILES),
]


def test_the_test_file_wrapper_is_not_part_of_the_id():
    old = reports.parse("tap", NODE_18_FILES, exit_code=1)
    new = reports.parse("tap", NODE_20_FILES, exit_code=1)
    assert statuses(new) == {"one word": P, "many words": F}
    # a file that failed without running a test keeps its path as the id
    assert statuses(old) == {**statuses(new), "/testbed/test/broken.test.js": F}


def test_node_test_runner_leaves_joined_with_arrows():
    report = reports.parse("tap", NODE_TEST, exit_code=1)
    assert statuses(report) == {
        "math > adds": P,
        "math > divides by zero": F,
        "math > nested suite > deep # hash": P,
        "math > later": S,
        "math > todo thing": X,
        "hooks > inner ok": P,
        "hooks": F,  # failed in a hook while its only subtest passed
        "top level ünïcode [brackets] > arrows": P,
    }
    assert report.by_id["math > divides by zero"].message == "Expected values to be strictly equal:"
    assert report.by_id["math > adds"].duration == pytest.approx(0.000512)
    assert report.by_id["math > later"].message == "not yet"
    assert report.by_id["math > todo thing"].message == "fix #42"
    assert report.warnings == ()
    assert report.consistent


def test_prove_prefixes_the_test_file():
    report = reports.parse("tap", PROVE, exit_code=1)
    assert statuses(report) == {
        "t/basic.t > loads": P,
        "t/basic.t > parses dates": F,
        "t/basic.t > 3": S,
        "t/basic.t > grouped # things > inner a": P,
        "t/basic.t > grouped # things > inner b": F,
        "t/died.t > starts": P,
        "t/died.t": F,  # died before its failures were reported: the verdict says so
        "t/extra.t > fine": P,
        "t/slow.t": S,
    }
    assert report.consistent


def test_prove_without_verbose_gives_file_verdicts():
    report = reports.parse("tap", PROVE_QUIET, exit_code=1)
    assert statuses(report) == {"t/basic.t": F, "t/extra.t": P, "t/slow.t": S}
    assert report.by_id["t/basic.t"].message.startswith("Dubious, test returned 2")


def test_tape_assertions():
    report = reports.parse("tap", TAPE)
    assert statuses(report) == {
        "should be equal": P,
        "should be equivalent": P,
        "should be truthy": F,
    }


def test_stream_cut_inside_a_subtest_names_leaves_from_headers():
    cut = NODE_TEST.index("    # Subtest: later")
    report = reports.parse("tap", NODE_TEST[:cut])
    assert statuses(report) == {
        "math > adds": P,
        "math > divides by zero": F,
        "math > nested suite > deep # hash": P,
    }
    assert "truncated" in report.warning_codes


def test_node_escapes_are_undone():
    report = reports.parse("tap", "ok 1 - a \\# b \\\\ c\\td # SKIP why \\# not\n")
    assert statuses(report) == {"a # b \\ c\td": S}
    assert report.results[0].message == "why # not"


def test_bail_out_stops_and_warns():
    report = reports.parse(
        "tap", "TAP version 13\n1..3\nok 1 - a\nBail out! database down\nok 2 - b\n"
    )
    assert statuses(report) == {"a": P}
    assert report.warning_codes == ("bail-out",)


def test_plan_mismatch_warns():
    report = reports.parse("tap", "1..3\nok 1 - a\nnot ok 2 - b\n")
    assert report.warning_codes == ("plan-mismatch",)


def test_not_tap_at_all():
    with pytest.raises(ReportParseError):
        reports.parse("tap", "hello world\n")
