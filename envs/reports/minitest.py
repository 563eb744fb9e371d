"""Minitest verbose output (``ruby -Itest test/x.rb -v``, ``rake test TESTOPTS=-v``).

Lines ``ClassName#test_name = 0.00 s = .`` where the last character is ``.`` (pass),
``F`` (failure), ``E`` (error) or ``S`` (skip); the id is ``ClassName#test_name``
(``Jekyll::TestSite#test_0001_does something`` for spec-style tests). Minitest prints
the name before running the test and the time and result after, so output the test
itself prints can split the line in two; both halves are joined.
"""

from __future__ import annotations

import re

from envs.models import TestStatus
from envs.reports._util import lines
from envs.reports.registry import ParseContext, register

_STATUS = {
    ".": TestStatus.PASSED,
    "F": TestStatus.FAILED,
    "E": TestStatus.ERROR,
    "S": TestStatus.SKIPPED,
}
_FULL = re.compile(r"^(?P<id>[^#\s][^#]*#.+?) = (?P<t>\d+(?:\.\d+)?) s = (?P<r>[.FES])\s*$")
_HEAD = re.compile(r"^(?P<id>[^#\s][^#]*#.+?) = (?P<rest>.*)$")
_TAIL = re.compile(r"(?P<t>\d+(?:\.\d+)?) s = (?P<r>[.FES])\s*$")


@register("minitest", kind="text", description="minitest -v output")
def parse_minitest(text: str, ctx: ParseContext) -> None:
    pending: str | None = None
    for line in lines(text):
        m = _FULL.match(line)
        if m:
            ctx.add(m["id"], _STATUS[m["r"]], duration=m["t"])
            pending = None
            continue
        m = _HEAD.match(line)
        if m and "#" not in m["rest"]:
            pending = m["id"]
            continue
        if pending is not None:
            m = _TAIL.search(line)
            if m:
                ctx.add(pending, _STATUS[m["r"]], duration=m["t"])
                pending = None
