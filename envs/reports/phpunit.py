"""PHPUnit ``--testdox`` text output.

A class header ``Calculator (Tests\\Calculator)`` followed by ``✔ Adds two numbers``
(pass), ``✘ Divides by zero`` (failure or error), ``↩ Skipped thing`` (skipped),
``∅ Incomplete thing`` (incomplete, SKIPPED). The id is ``<header> > <test>`` with the
header's parenthesised class left out, as in SWE-bench's phpunit parser
(``Calculator > Adds two numbers``). PHPUnit 9.5+ lists the tests that did not pass a
second time, in a "Summary of non-successful tests" section; the repeats are one result.
"""

from __future__ import annotations

import re

from envs.models import TestStatus
from envs.reports._util import lines
from envs.reports.registry import ParseContext, register

# A trailing duration, "  12 ms"; matched on the line's tail only, since a search over the
# whole line backtracks quadratically on a long run of spaces not followed by one.
_DURATION = re.compile(r"\s+\d+(?:\.\d+)? ms$")
_DURATION_TAIL = 64


def _without_duration(text: str) -> str:
    if not text.endswith(" ms"):
        return text
    head, tail = text[:-_DURATION_TAIL], text[-_DURATION_TAIL:]
    cut = _DURATION.sub("", tail)
    return (head + cut).rstrip() if cut != tail else text
_STATUS = {
    "✔": TestStatus.PASSED,
    "✘": TestStatus.FAILED,
    "↩": TestStatus.SKIPPED,
    "∅": TestStatus.SKIPPED,
    "☢": TestStatus.PASSED,  # risky: it ran and passed, with a warning
}


@register("phpunit-testdox", kind="text", description="phpunit --testdox output")
def parse_phpunit_testdox(text: str, ctx: ParseContext) -> None:
    # PHPUnit 9.5+ repeats the tests that did not pass under "Summary of non-successful
    # tests:" (headers included); the repeat is the same observation, not a duplicate.
    ctx.expect_repeats = True
    suite: str | None = None
    for line in lines(text):
        stripped = line.strip()
        if stripped[:1] in _STATUS:
            name = _without_duration(stripped[1:].strip())
            if name:
                ctx.add(f"{suite} > {name}" if suite else name, _STATUS[stripped[0]])
            continue
        # a class header, "Name (Namespace\\Class)": SWE-bench's ^(\w.+) \(.+\)$
        cut = line.rfind(" (")
        if (
            cut > 0
            and line.endswith(")")
            and len(line) > cut + 3
            and (line[0].isalnum() or line[0] == "_")
        ):
            suite = line[:cut]
