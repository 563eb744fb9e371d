"""A Tcl test harness's console: a ``runtest`` script driving ``tests/test_helper.tcl``.

The harness (Redis and the servers that grew from it) prints one line a test:
``[ok]: NAME (12 ms)``, ``[err]: NAME in tests/unit/foo.tcl`` (the error follows on the next
lines), ``[skip]: NAME``. The id is NAME, as SWE-bench's parser for this harness writes it.
Failed tests are listed again at the end of the run, so a repeated id is expected.
``[exception]:`` means a test client died: the tests after it did not run, which is said
as a warning (the runs that compare before and after see them missing).
``[ignore]: NAME: why`` (left out by a tag) and the progress lines (``[ready]``,
``[3/80 done]``) are not tests.
"""

from __future__ import annotations

import re

from envs.models import TestStatus
from envs.reports._util import lines
from envs.reports.registry import ParseContext, register

_LINE = re.compile(r"^\[(ok|err|skip|exception)\]: (.*)$")
_ELAPSED = re.compile(r" \(\d+ ms\)$")
_WHERE = re.compile(r" in tests/\S+\.tcl$")
_STATUS = {"ok": TestStatus.PASSED, "err": TestStatus.FAILED, "skip": TestStatus.SKIPPED}


@register("tcltest", kind="text",
          description="Tcl runtest harness console ([ok]: / [err]: / [skip]: lines)")
def parse_tcltest(text: str, ctx: ParseContext) -> None:
    ctx.expect_repeats = True
    for line in lines(text):
        m = _LINE.match(line.lstrip("*> \t"))  # the closing summary indents with "*** "
        if not m:
            continue
        word, rest = m.groups()
        if word == "exception":
            ctx.warn("aborted", f"a test client died: {rest[:200]}")
            continue
        name = _ELAPSED.sub("", rest) if word == "ok" else _WHERE.sub("", rest)
        if name:
            ctx.add(name, _STATUS[word])
