"""Fallbacks: the exit code alone, and generic ``PASS name`` style lines.

``exitcode`` reads no report: one result, PASSED iff the exit code is 0, named by the
variant (``exitcode:tests``) or the ``name`` option, else ``exitcode``.

``plain`` reads lines of the common shapes ``PASS name``, ``PASS: name``,
``[PASSED] name``, ``ok name`` / ``not ok name`` (no number), ``FAIL``/``FAILED``,
``SKIP``/``SKIPPED``, ``ERROR``, ``XFAIL``; and ``name ... ok`` as unittest / Django's
runner prints it with verbosity 2 (``test_x (app.tests.T) ... ok``, ``... FAIL``,
``... ERROR``, ``... skipped 'why'``, ``... expected failure``, ``... unexpected success``),
whose ids then match SWE-bench's Django ids.
"""

from __future__ import annotations

import re

from envs.models import TestStatus
from envs.reports._util import lines
from envs.reports.registry import ParseContext, ReportParseError, register


@register("exitcode", kind="fallback", description="no report: the exit code is the one result")
def parse_exitcode(text: str, ctx: ParseContext) -> None:
    if ctx.exit_code is None:
        raise ReportParseError("exitcode: needs the exit code")
    name = ctx.variant or ctx.option("name") or "exitcode"
    if ctx.exit_code == 0:
        ctx.add(name, TestStatus.PASSED)
    else:
        tail = text.strip()[-500:] or None
        ctx.add(
            name,
            TestStatus.FAILED,
            message=f"exit code {ctx.exit_code}" + (f": {tail}" if tail else ""),
        )


_WORD = {
    "pass": TestStatus.PASSED,
    "passed": TestStatus.PASSED,
    "ok": TestStatus.PASSED,
    "fail": TestStatus.FAILED,
    "failed": TestStatus.FAILED,
    "not ok": TestStatus.FAILED,
    "skip": TestStatus.SKIPPED,
    "skipped": TestStatus.SKIPPED,
    "error": TestStatus.ERROR,
    "xfail": TestStatus.XFAIL,
}
_PREFIX = re.compile(
    r"^\s*\[?(PASS(?:ED)?|FAIL(?:ED)?|SKIP(?:PED)?|ERROR|XFAIL|not ok|ok)\]?:?\s+(\S.*)$"
)
_COUNTER = re.compile(r"^\d+(?:\s*(?:/\s*\d+|tests?|checks?|assertions?|cases?|%|of \d+))*\s*$",
                      re.IGNORECASE)
_UNITTEST = re.compile(
    r"^(?P<id>\S.*?) \.\.\. (?P<st>ok|FAIL|ERROR|skipped\b.*|expected failure|unexpected success)$"
)
_UNITTEST_STATUS = {
    "ok": TestStatus.PASSED,
    "FAIL": TestStatus.FAILED,
    "ERROR": TestStatus.ERROR,
    "expected failure": TestStatus.XFAIL,
    "unexpected success": TestStatus.FAILED,
}


@register("plain", kind="text", description="generic PASS/FAIL lines and unittest/Django '... ok'")
def parse_plain(text: str, ctx: ParseContext) -> None:
    ctx.expect_repeats = True
    for line in lines(text):
        m = _UNITTEST.match(line)
        if m:
            word = m["st"]
            status = TestStatus.SKIPPED if word.startswith("skipped") else _UNITTEST_STATUS[word]
            ctx.add(m["id"], status)
            continue
        m = _PREFIX.match(line)
        if m:
            word, name = m.groups()
            if word.lower() in ("ok", "not ok") and re.match(r"\d+\b", name):
                continue  # a numbered TAP line: use the tap format for those
            if _COUNTER.match(name):
                continue  # a summary ("PASSED: 16", "FAILED: 0 tests"), not a test
            ctx.add(name, _WORD[word.lower()])
