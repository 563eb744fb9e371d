"""Hostile report inputs, each a function of its size, and what a parser must make of them.

A patch controls what its tests print, so a report is adversarial input: a regex that
backtracks, or a salvage loop that rescans, would let it hang the grader. Each input here
was quadratic (or worse) in some draft of a parser -- one 20 kB pytest line took 73 s.

Shared by `test_performance.py` (the outcome, without time) and `bench/reports.py` (how
parse time scales with the size, measured side by side with a one-pass baseline).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

N = 200_000  # characters: a linear parser takes milliseconds, a quadratic one hours
# Note: the text parsers cut a line at envs.reports._util.MAX_LINE (65,536) characters, so at
# N a one-line input reaches them cut (its tail gone); bench/reports.py also measures them
# below that length, where the whole line reaches the regexes.


@dataclass(frozen=True)
class Hostile:
    fmt: str
    make: Callable[[int], str]
    # What the parser makes of it at size N: the results by id (id -> status), or, as a
    # str, a fragment of the ReportParseError that refuses it.
    expect: dict[str, str] | str
    scales: bool = True  # False: the same input at any n (its hostility is its shape)

    def data(self, n: int = N) -> str:
        return self.make(n)


_TAP_NESTED = "".join("    " * k + "ok 1 - x\n" for k in range(300, -1, -1))
NESTED_TAP_ID = " > ".join(["x"] * 301)  # 300 levels of subtests around the test

CASES: list[Hostile] = [
    Hostile("pytest", lambda n: "a" + "::b PASSED (" * (n // 12), {}),
    Hostile("pytest", lambda n: "x::y" + " " * n + "z PASSED", {}),
    Hostile("pytest", lambda n: "=== " + "= " * (n // 2) + "x", {}),
    Hostile("pytest", lambda n: "[gw0] PASSED x" + " " * n + "y", {"x": "PASSED"}),
    Hostile("pytest", lambda n: ("tests/x.py::t PASSED" + " " * 50 + "[ 50%]\n") * (n // 70),
            {"tests/x.py::t": "PASSED"}),
    Hostile("pytest", lambda n: ("a::b" + " PASSED x" * max(1, (7000 * n) // N) + "\n") * 4, {}),
    Hostile("tap", lambda n: "# Subtest: a" + " " * n + "b", {}),
    Hostile("tap", lambda n: _TAP_NESTED, {NESTED_TAP_ID: "PASSED"}, scales=False),
    Hostile("plain", lambda n: "PASS " + " " * n + "x", {}),
    Hostile("automake", lambda n: "PASS: x" + " " * n + "y", {"x": "PASSED"}),
    Hostile("gotest", lambda n: "=== RUN x" + " " * n + "y", {}),
    Hostile("libtest", lambda n: "test a" + " ..." * (n // 4) + " ok", {}),
    Hostile("libtest", lambda n: "test a ... x\n" + "test b ... y\n" * (n // 13) + "ok\n",
            {"b": "PASSED"}),
    Hostile("libtest", lambda n: "---- a stdout ---" * (n // 17), {}),
    Hostile("libtest", lambda n: "failures:\n\n---- a stdout ----\n" + "x" * n + "\n" * (n // 2),
            {}),
    Hostile("phpunit-testdox", lambda n: "a" + " (x)" * (n // 4) + " y", {}),
    Hostile("phpunit-testdox", lambda n: " ✔ x" + " " * n + "1 ms y", {"x": "PASSED"}),
    Hostile("minitest", lambda n: "A#" + "b = 1 s = " * (n // 10), {}),
    Hostile("jest-json", lambda n: '{"ancestorTitles":' * (n // 18), "no testResults array"),
    Hostile("jest-json", lambda n: '{"ancestorTitles": "' * (n // 20), "no testResults array"),
    Hostile("rspec-json", lambda n: '{"id":' * (n // 6), "no examples array"),
    Hostile("mocha-json", lambda n: "{\n" * (n // 2), "no passes/failures/pending arrays"),
    Hostile("gotest-json", lambda n: '{"Action":"run","Test":"T' + "x" * n + "\n",
            "no go test -json events found"),
    Hostile("junit", lambda n: "<testsuite>" + "<testcase name='a'>" * (n // 19),
            "nested deeper than 256"),
    Hostile("junit", lambda n: "<a/>" * (n // 4), "not a JUnit report"),
    Hostile("doctest-xml",
            lambda n: "<doctest><TestSuite><TestCase name='x'>" + "<SubCase name='a'>" * (n // 18),
            "nested deeper than 256"),
    Hostile("catch2-xml", lambda n: "<Catch>" + "<TestCase name='x'>" * (n // 19),
            "nested deeper than 256"),
]


def case_id(i: int, case: Hostile) -> str:
    return f"{case.fmt}-{i}"
