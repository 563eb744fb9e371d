"""pytest terminal output: -rA short summary and -v progress lines."""

from __future__ import annotations

import pytest

from envs import reports

from ._helpers import E, F, P, S, X, statuses

RA_LOG = """\
============================= test session starts ==============================
platform linux -- Python 3.11.7, pytest-8.2.0, pluggy-1.5.0
rootdir: /testbed
configfile: pyproject.toml
collected 9 items

tests/test_api.py .F.sxX.E                                               [ 88%]
tests/test_params.py .                                                   [100%]

==================================== ERRORS ====================================
________________________ ERROR at teardown of test_db __________________________

    def teardown():
>       raise RuntimeError("boom")
E       RuntimeError: boom
=================================== FAILURES ===================================
_________________________________ test_divide __________________________________

    def test_divide():
>       assert 1 / 1 == 2
E       assert 1.0 == 2

tests/test_api.py:12: AssertionError
==================================== PASSES ====================================
_________________________________ test_noisy ___________________________________
----------------------------- Captured stdout call -----------------------------
PASSED tests/test_api.py::test_that_does_not_exist
FAILED this line is printed by a test
=========================== short test summary info ============================
PASSED tests/test_api.py::test_add
PASSED tests/test_api.py::test_noisy
PASSED tests/test_api.py::test_db
PASSED tests/test_params.py::test_p[a b-\\xfc]
PASSED tests/test_params.py::TestCls::test_m[x - y]
XFAIL tests/test_api.py::test_known - reason: issue #12
XPASS tests/test_api.py::test_lucky - flaky on CI
SKIPPED [1] tests/test_api.py:30: requires network
ERROR tests/test_api.py::test_db - RuntimeError: boom
FAILED tests/test_api.py::test_divide - assert 1.0 == 2
FAILED tests/test_params.py::test_q[ü-[nested]] - AssertionError: nope - really
ERROR tests/test_broken.py - ModuleNotFoundError: No module named 'nope'
==== 2 failed, 5 passed, 1 skipped, 1 xfailed, 1 xpassed, 2 errors in 0.12s ====
PASSED tests/test_api.py::printed_after_the_summary
"""

VERBOSE_LOG = """\
============================= test session starts ==============================
collecting ... collected 6 items

tests/test_x.py::test_a PASSED                                           [ 16%]
tests/test_x.py::test_b FAILED                                           [ 33%]
tests/test_x.py::test_s SKIPPED (requires FAILED thing)                  [ 50%]
tests/test_x.py::test_xf XFAIL (known)                                   [ 66%]
tests/test_x.py::TestK::test_p[a b-ü] PASSED                             [ 83%]
tests/test_x.py::TestSub::test_base <- tests/base.py PASSED              [100%]

=================================== FAILURES ===================================
=========================== short test summary info ============================
FAILED tests/test_x.py::test_b - assert 0
=================== 1 failed, 3 passed, 1 skipped, 1 xfailed in 0.05s ===================
"""

XDIST_LOG = """\
[gw0] [ 25%] PASSED tests/test_a.py::test_one\x20
[gw1] [ 50%] FAILED tests/test_a.py::test_two\x20
[gw0] [ 75%] SKIPPED tests/test_a.py::test_three\x20
[gw1] [100%] PASSED tests/test_a.py::test_four[1 2]\x20
"""

SAMPLES = [("pytest", RA_LOG), ("pytest", VERBOSE_LOG), ("pytest", XDIST_LOG)]


def test_rA_summary_gives_node_ids_and_statuses():
    report = reports.parse("pytest", RA_LOG, exit_code=1)
    assert statuses(report) == {
        "tests/test_api.py::test_add": P,
        "tests/test_api.py::test_noisy": P,
        "tests/test_api.py::test_db": E,  # passed, then errored in teardown
        "tests/test_params.py::test_p[a b-\\xfc]": P,
        "tests/test_params.py::TestCls::test_m[x - y]": P,
        "tests/test_api.py::test_known": X,
        "tests/test_api.py::test_lucky": P,  # XPASS
        "tests/test_api.py::test_divide": F,
        "tests/test_params.py::test_q[ü-[nested]]": F,
        "tests/test_broken.py": E,
    }
    assert report.by_id["tests/test_api.py::test_divide"].message == "assert 1.0 == 2"
    assert (
        report.by_id["tests/test_params.py::test_q[ü-[nested]]"].message
        == "AssertionError: nope - really"
    )
    assert report.consistent


def test_lines_outside_the_summary_section_are_not_results():
    ids = reports.parse("pytest", RA_LOG).by_id
    assert "tests/test_api.py::test_that_does_not_exist" not in ids
    assert "tests/test_api.py::printed_after_the_summary" not in ids


def test_teardown_error_after_pass_warns_about_the_conflict():
    report = reports.parse("pytest", RA_LOG)
    assert report.warning_codes.count("duplicate") == 1
    assert "test_db" in next(w for w in report.warnings if w.startswith("duplicate"))


def test_skip_summary_lines_without_node_ids_warn():
    report = reports.parse("pytest", RA_LOG)
    assert "no-node-id" in report.warning_codes


def test_verbose_lines_give_skipped_and_xfailed_tests():
    report = reports.parse("pytest", VERBOSE_LOG, exit_code=1)
    assert statuses(report) == {
        "tests/test_x.py::test_a": P,
        "tests/test_x.py::test_b": F,
        "tests/test_x.py::test_s": S,
        "tests/test_x.py::test_xf": X,
        "tests/test_x.py::TestK::test_p[a b-ü]": P,
        "tests/test_x.py::TestSub::test_base": P,
    }
    assert report.by_id["tests/test_x.py::test_s"].message == "requires FAILED thing"
    # test_b is in both the -v lines and the summary: one observation, no warning
    assert report.warnings == ()


def test_xdist_verbose_lines():
    report = reports.parse("pytest", XDIST_LOG)
    assert statuses(report) == {
        "tests/test_a.py::test_one": P,
        "tests/test_a.py::test_two": F,
        "tests/test_a.py::test_three": S,
        "tests/test_a.py::test_four[1 2]": P,
    }


def test_without_a_summary_header_status_lines_anywhere_count():
    # a log sliced between SWE-bench's markers may have lost the header
    report = reports.parse("pytest", "PASSED a.py::t1\nFAILED a.py::t2 - x\nnoise\n")
    assert statuses(report) == {"a.py::t1": P, "a.py::t2": F}


def test_ansi_colours_and_carriage_returns_are_handled():
    log = "\x1b[32mPASSED\x1b[0m a.py::t1\r\n\x1b[31mFAILED\x1b[0m a.py::t2 - boom\r\n"
    assert statuses(reports.parse("pytest", log)) == {"a.py::t1": P, "a.py::t2": F}


@pytest.mark.parametrize(
    ("rest", "node", "message"),
    [
        ("a.py::t", "a.py::t", None),
        ("a.py::t - msg", "a.py::t", "msg"),
        ("a.py::t[a - b] - msg - more", "a.py::t[a - b]", "msg - more"),
        ("a.py::t[a b] reason words", "a.py::t[a b]", "reason words"),  # old XPASS style
        ("dir with space/a.py::t", "dir with space/a.py::t", None),
    ],
)
def test_split_id(rest, node, message):
    from envs.reports.pytest_text import split_id

    assert split_id(rest) == (node, message)


def test_empty_log_gives_no_results():
    assert reports.parse("pytest", b"").results == ()
