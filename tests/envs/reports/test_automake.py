"""automake's make check output and .trs files."""

from __future__ import annotations

import pytest

from envs import reports
from envs.reports import ReportParseError

from ._helpers import E, F, P, S, X, statuses

MAKE_CHECK = """\
make  check-TESTS
make[2]: Entering directory '/testbed'
make[3]: Entering directory '/testbed'
\x1b[0;32mPASS\x1b[m: tests/optionaltest
PASS: tests/mantest
FAIL: tests/jqtest
XFAIL: tests/known-bug.sh
XPASS: tests/fixed-by-accident.sh
SKIP: tests/onigtest
ERROR: tests/hard-error
PASS: tests/t.tap 1 - parses [1, 2] with ünïcode
============================================================================
Testsuite summary for jq 1.7.1
============================================================================
# TOTAL: 8
# PASS:  3
# SKIP:  1
# XFAIL: 1
# FAIL:  1
# XPASS: 1
# ERROR: 1
============================================================================
See ./test-suite.log
============================================================================
make[3]: *** [Makefile:1234: test-suite.log] Error 1

FAIL: tests/jqtest
==================

Test #42: 'ltrimstr("x")' at line number 1234
*** Expected ...
"""

TRS = ":test-result: PASS\n:global-test-result: FAIL\n:recheck: yes\n:copy-in-global-log: yes\n"

SAMPLES = [("automake", MAKE_CHECK)]


def test_make_check_lines():
    report = reports.parse("automake", MAKE_CHECK, exit_code=2)
    assert statuses(report) == {
        "tests/optionaltest": P,
        "tests/mantest": P,
        "tests/jqtest": F,
        "tests/known-bug.sh": X,
        "tests/fixed-by-accident.sh": F,  # XPASS fails an automake suite
        "tests/onigtest": S,
        "tests/hard-error": E,
        "tests/t.tap 1 - parses [1, 2] with ünïcode": P,
    }
    assert report.warnings == ()  # test-suite.log repeating FAIL is not a duplicate


def test_trs_file_is_named_by_the_caller():
    report = reports.parse("automake:tests/jqtest", TRS)
    assert statuses(report) == {"tests/jqtest": F}  # the global result decides
    assert statuses(reports.parse("automake", TRS, options={"name": "t"})) == {"t": F}
    with pytest.raises(ReportParseError, match="does not name its test"):
        reports.parse("automake", TRS)
