"""Parsing time stays linear on hostile input.

A patch controls what its tests print, so a report is adversarial input: a regex that
backtracks, or a salvage loop that rescans, would let it hang the grader. Each input
here was quadratic (or worse) in some draft of a parser -- one 20 kB pytest line took
73 s -- and must now parse in well under the limit.
"""

from __future__ import annotations

import time

import pytest

from envs import reports

LIMIT_S = 3.0  # generous: the inputs take milliseconds; a quadratic parser takes minutes
N = 200_000

HOSTILE = [
    ("pytest", "a" + "::b PASSED (" * (N // 12)),
    ("pytest", "x::y" + " " * N + "z PASSED"),
    ("pytest", "=== " + "= " * (N // 2) + "x"),
    ("pytest", "[gw0] PASSED x" + " " * N + "y"),
    ("pytest", ("tests/x.py::t PASSED" + " " * 50 + "[ 50%]\n") * (N // 70)),
    ("pytest", ("a::b" + " PASSED x" * 7000 + "\n") * 4),
    ("tap", "# Subtest: a" + " " * N + "b"),
    ("tap", "".join("    " * k + "ok 1 - x\n" for k in range(300, -1, -1))),
    ("plain", "PASS " + " " * N + "x"),
    ("automake", "PASS: x" + " " * N + "y"),
    ("gotest", "=== RUN x" + " " * N + "y"),
    ("libtest", "test a" + " ..." * (N // 4) + " ok"),
    ("libtest", "test a ... x\n" + "test b ... y\n" * (N // 13) + "ok\n"),
    ("libtest", "---- a stdout ---" * (N // 17)),
    ("libtest", "failures:\n\n---- a stdout ----\n" + "x" * N + "\n" * (N // 2)),
    ("phpunit-testdox", "a" + " (x)" * (N // 4) + " y"),
    ("phpunit-testdox", " ✔ x" + " " * N + "1 ms y"),
    ("minitest", "A#" + "b = 1 s = " * (N // 10)),
    ("jest-json", '{"ancestorTitles":' * (N // 18)),
    ("jest-json", '{"ancestorTitles": "' * (N // 20)),
    ("rspec-json", '{"id":' * (N // 6)),
    ("mocha-json", "{\n" * (N // 2)),
    ("gotest-json", '{"Action":"run","Test":"T' + "x" * N + "\n"),
    ("junit", "<testsuite>" + "<testcase name='a'>" * (N // 19)),
    ("junit", "<a/>" * (N // 4)),
    ("doctest-xml", "<doctest><TestSuite><TestCase name='x'>" + "<SubCase name='a'>" * (N // 18)),
    ("catch2-xml", "<Catch>" + "<TestCase name='x'>" * (N // 19)),
]


@pytest.mark.parametrize(
    ("fmt", "data"), HOSTILE, ids=[f"{f}-{i}" for i, (f, _) in enumerate(HOSTILE)]
)
def test_hostile_input_parses_quickly(fmt, data):
    start = time.perf_counter()
    try:
        reports.parse(fmt, data, exit_code=1)
    except reports.ReportParseError as exc:
        assert not exc.internal
    assert time.perf_counter() - start < LIMIT_S
