"""unittest's verbose output (captured from CPython 3.11's ``python -m unittest -v``; the
Django runner prints the same lines), ids as printed — SWE-bench's Django parser keys."""

from __future__ import annotations

from envs import reports

from ._helpers import E, F, P, S, statuses

VERBOSE = (
    "test_doc (test_m.C.test_doc)\n"
    "Docstring first line. ... ok\n"
    "test_error (test_m.C.test_error) ... ERROR\n"
    "test_fail (test_m.C.test_fail) ... FAIL\n"
    "test_pass (test_m.C.test_pass) ... ok\n"
    "test_skip (test_m.C.test_skip) ... skipped 'not today'\n"
    "test_xfail (test_m.C.test_xfail) ... expected failure\n"
    "test_xpass (test_m.C.test_xpass) ... unexpected success\n"
    "test_printing (test_m.C.test_printing) ... line one\n"
    "ok\n"
    "\n"
    "======================================================================\n"
    "ERROR: test_error (test_m.C.test_error)\n"
    "----------------------------------------------------------------------\n"
    "Traceback (most recent call last):\n"
    '  File "/tmp/ut/test_m.py", line 5, in test_error\n'
    "RuntimeError: boom ... ok\n"
    "\n"
    "Ran 9 tests in 0.001s\n"
    "\n"
    "FAILED (failures=1, errors=1, skipped=1, expected failures=1, unexpected successes=1)\n"
)
# Python < 3.11 and Django's older runner name the class without the method
OLD_FORM = "test_a (app.tests.ViewTests) ... ok\ntest_b (app.tests.ViewTests) ... FAIL\n"

SAMPLES = [("unittest", VERBOSE), ("unittest", OLD_FORM)]


def test_each_outcome_and_docstring_ids():
    got = statuses(reports.parse("unittest", VERBOSE, exit_code=1))
    assert got["Docstring first line."] == P
    assert got["test_error (test_m.C.test_error)"] == E
    assert got["test_fail (test_m.C.test_fail)"] == F
    assert got["test_pass (test_m.C.test_pass)"] == P
    assert got["test_skip (test_m.C.test_skip)"] == S
    assert got["test_xfail (test_m.C.test_xfail)"] == "XFAIL"
    assert got["test_xpass (test_m.C.test_xpass)"] == F
    assert got["test_printing (test_m.C.test_printing)"] == P  # outcome on a later line
    assert "test_doc (test_m.C.test_doc)" not in got  # the docstring line names it
    assert "RuntimeError: boom" not in got  # a traceback line names no test


def test_older_form_and_ids_are_never_cut():
    got = statuses(reports.parse("unittest", OLD_FORM, exit_code=1))
    assert got == {"test_a (app.tests.ViewTests)": P, "test_b (app.tests.ViewTests)": F}
    assert reports.swebench_id("test_a (app.tests.ViewTests)", "unittest") == \
        "test_a (app.tests.ViewTests)"
