"""Automake's test harness: ``make check`` output and ``.trs`` files.

Lines ``PASS: tests/foo``, ``FAIL:``, ``XFAIL:``, ``XPASS:``, ``SKIP:``, ``ERROR:``; the id
is the rest of the line (the test script path, ``tests/t.tap 3 - name`` for TAP-driven
tests), as in SWE-bench's jq parser. XPASS is FAILED: automake counts an unexpected
pass as a failure and ``make check`` exits non-zero for it. The ``# PASS:  4`` summary
block is not a test.

A ``.trs`` file (``:test-result: PASS``, ``:global-test-result:``) does not name its
test, so the caller names it: ``automake:tests/foo``.
"""

from __future__ import annotations

import re

from envs.models import TestStatus
from envs.reports._util import lines
from envs.reports.registry import STATUS_RANK, ParseContext, ReportParseError, register

_STATUS = {
    "PASS": TestStatus.PASSED,
    "FAIL": TestStatus.FAILED,
    "XFAIL": TestStatus.XFAIL,
    "XPASS": TestStatus.FAILED,
    "SKIP": TestStatus.SKIPPED,
    "ERROR": TestStatus.ERROR,
}
_LINE = re.compile(r"^\s*(PASS|FAIL|XFAIL|XPASS|SKIP|ERROR): (\S.*)$")
_TRS = re.compile(r"^:(global-test-result|test-result):\s*(\S+)")


@register(
    "automake", kind="text", description="make check (automake parallel-tests) output, .trs files"
)
def parse_automake(text: str, ctx: ParseContext) -> None:
    ctx.expect_repeats = True  # the console line and test-suite.log name a failure twice
    trs: list[TestStatus] = []
    global_result: TestStatus | None = None
    for line in lines(text):
        m = _TRS.match(line)
        if m:
            status = _STATUS.get(m.group(2).upper())
            if status is None:
                continue
            if m.group(1) == "global-test-result":
                global_result = status
            else:
                trs.append(status)
            continue
        m = _LINE.match(line)
        if m:
            word, name = m.groups()
            status = _STATUS[word]
            ctx.add(name, status, message="unexpected pass" if word == "XPASS" else None)
    if trs or global_result is not None:
        name = ctx.variant or ctx.option("name")
        if not name:
            raise ReportParseError(
                "automake: a .trs file does not name its test; use automake:<test path>"
            )
        overall = global_result or max(trs, key=STATUS_RANK.__getitem__)
        ctx.add(name, overall)
