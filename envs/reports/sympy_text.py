"""SymPy's own test runner, verbose (``bin/test -C --verbose FILES``).

Per file a header ``sympy/core/tests/test_basic.py[22]``, then one line per test,
``test_name <outcome>``, the outcome one of ``ok`` (PASSED), ``F`` (FAILED), ``E`` (ERROR),
``f`` (an expected failure: XFAIL), ``X`` (an unexpected pass, which the runner counts as a
failure: FAILED), ``s`` / ``w`` (skipped / skipped as slow: SKIPPED), optionally followed by
the time taken and, after the file's last test, ``[OK]`` or ``[FAIL]``. The id is the test
function's name — what SWE-bench's parser for this runner keys on.
"""

from __future__ import annotations

import re

from envs.models import TestStatus
from envs.reports._util import lines
from envs.reports.registry import ParseContext, register

_STATUS = {"ok": TestStatus.PASSED, "F": TestStatus.FAILED, "E": TestStatus.ERROR,
           "f": TestStatus.XFAIL, "X": TestStatus.FAILED, "s": TestStatus.SKIPPED,
           "w": TestStatus.SKIPPED}
_LINE = re.compile(r"^(?P<id>test_\w+)\s+(?P<st>ok|F|E|f|X|s|w)(?:\s+[\d.]+s)?"
                   r"(?:\s+\[(?:OK|FAIL)\])?$")


@register("sympy", kind="text", description="sympy bin/test --verbose output")
def parse_sympy(text: str, ctx: ParseContext) -> None:
    for line in lines(text):
        m = _LINE.match(line.strip())
        if m:
            ctx.add(m["id"], _STATUS[m["st"]])
