"""exitcode and plain: the fallbacks."""

from __future__ import annotations

import pytest

from envs import reports
from envs.reports import ReportParseError

from ._helpers import E, F, P, S, X, statuses

PLAIN = """\
PASS tests/a b
FAIL: tests/ünïcode [1]
[PASSED] suite > works
[FAILED] suite > breaks
ok tests/ok-line
not ok tests/not-ok-line
SKIP tests/skipped
ok 1 - numbered tap lines are for the tap format
test_lookup (lookup.tests.LookupTests.test_lookup) ... ok
test_broken (lookup.tests.LookupTests.test_broken) ... FAIL
test_crash (lookup.tests.LookupTests) ... ERROR
test_skip (lookup.tests.LookupTests) ... skipped 'needs postgres'
test_xf (lookup.tests.LookupTests) ... expected failure
test_lucky (lookup.tests.LookupTests) ... unexpected success
"""

SAMPLES = [("plain", PLAIN)]


@pytest.mark.parametrize(("code", "status"), [(0, P), (1, F), (137, F)])
def test_exitcode_is_one_result(code, status):
    report = reports.parse("exitcode", b"some output", exit_code=code)
    assert statuses(report) == {"exitcode": status}
    assert report.consistent


def test_exitcode_is_named_by_the_variant_or_option():
    assert statuses(reports.parse("exitcode:tests", b"", exit_code=0)) == {"tests": P}
    assert statuses(reports.parse("exitcode", b"", exit_code=0, options={"name": "build"})) == {
        "build": P
    }
    failed = reports.parse("exitcode:tests", b"Traceback...\nValueError: x\n", exit_code=1)
    assert failed.results[0].message.startswith("exit code 1: Traceback")


def test_exitcode_needs_an_exit_code():
    with pytest.raises(ReportParseError, match="exit code"):
        reports.parse("exitcode", b"")


def test_plain_lines():
    assert statuses(reports.parse("plain", PLAIN)) == {
        "tests/a b": P,
        "tests/ünïcode [1]": F,
        "suite > works": P,
        "suite > breaks": F,
        "tests/ok-line": P,
        "tests/not-ok-line": F,
        "tests/skipped": S,
        "test_lookup (lookup.tests.LookupTests.test_lookup)": P,
        "test_broken (lookup.tests.LookupTests.test_broken)": F,
        "test_crash (lookup.tests.LookupTests)": E,
        "test_skip (lookup.tests.LookupTests)": S,
        "test_xf (lookup.tests.LookupTests)": X,
        "test_lucky (lookup.tests.LookupTests)": F,
    }


def test_summary_counters_are_not_tests():
    from envs.reports import parse

    text = "PASS: test_a\nFAIL: test_b\nPASSED: 16\nFAILED: 0\nPASS: 3 tests\n"
    ids = [r.test_id for r in parse("plain", text).results]
    assert ids == ["test_a", "test_b"]
