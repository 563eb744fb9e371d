"""SymPy's bin/test --verbose output (captured from sympy at a 2020 commit)."""

from __future__ import annotations

from envs import reports

from ._helpers import E, F, P, S, statuses

VERBOSE = (
    "============================= test process starts ==============================\n"
    "executable:         /tmp/sv/bin/python  (3.11.7-final-0) [CPython]\n"
    "random seed:        9921797\n"
    "\n"
    "sympy/core/tests/test_singleton.py[3] \n"
    "test_Singleton ok\n"
    "test_singleton_redefinition ok\n"
    "test_names_in_namespace ok                                                  [OK]\n"
    "\n"
    "sympy/core/tests/test_sympify.py[6] \n"
    "test_issue_16772 f\n"
    "test_sympify1 F\n"
    "test_sympify2 E\n"
    "test_slow_one w\n"
    "test_skipped s\n"
    "test_xpassing X                                                           [FAIL]\n"
    "\n"
    "________________________________ slowest tests _________________________________\n"
    "_ sympy/core/tests/test_sympify.py:test_sympify1 _\n"
    "Traceback (most recent call last):\n"
    "AssertionError\n"
    "== tests finished: 3 passed, 2 failed, 1 expected to fail, in 0.34 seconds ==\n"
)

SAMPLES = [("sympy", VERBOSE)]


def test_each_outcome():
    got = statuses(reports.parse("sympy", VERBOSE, exit_code=1))
    assert got == {"test_Singleton": P, "test_singleton_redefinition": P,
                   "test_names_in_namespace": P, "test_issue_16772": "XFAIL",
                   "test_sympify1": F, "test_sympify2": E, "test_slow_one": S,
                   "test_skipped": S, "test_xpassing": F}
