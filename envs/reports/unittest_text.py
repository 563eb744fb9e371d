"""Python unittest's verbose output (``python -m unittest -v``, Django's
``tests/runtests.py --verbosity 2`` and other runners built on unittest).

One line per test, ``<description> ... <outcome>``, where the description is
``test_name (module.Class)`` (``test_name (module.Class.test_name)`` from Python 3.11), or
the first line of the test's docstring, printed on a line of its own after the name. The
id is the description, exactly as printed — what SWE-bench's Django parser keys on, so its
ids for docstring tests are the docstring lines.

Outcomes: ``ok`` (PASSED), ``FAIL`` (FAILED), ``ERROR`` (ERROR), ``skipped 'why'``
(SKIPPED), ``expected failure`` (XFAIL), ``unexpected success`` (FAILED: unittest counts it
against the run). Output a test prints lands between ``... `` and its outcome; the outcome
alone at the start of a later line completes the pending test. The failure details after
the results (a ``=====`` rule, then ``ERROR: ...`` / ``FAIL: ...``) are not read: a
traceback line with `` ... `` in it names no test.
"""

from __future__ import annotations

from envs.models import TestStatus
from envs.reports._util import lines
from envs.reports.registry import ParseContext, register

_OUTCOMES = (
    ("ok", TestStatus.PASSED),
    ("FAIL", TestStatus.FAILED),
    ("ERROR", TestStatus.ERROR),
    ("skipped", TestStatus.SKIPPED),
    ("expected failure", TestStatus.XFAIL),
    ("unexpected success", TestStatus.FAILED),
)
_SEP = " ... "


def _outcome(text: str) -> TestStatus | None:
    text = text.strip()
    for word, status in _OUTCOMES:
        if text == word or text.startswith(word + " ") or (word == "skipped"
                                                           and text.startswith(word)):
            return status
    return None


@register("unittest", kind="text", description="unittest -v / Django runtests.py -v 2 output")
def parse_unittest(text: str, ctx: ParseContext) -> None:
    pending: str | None = None
    rule = False
    for line in lines(text):
        if rule and line.startswith(("ERROR: ", "FAIL: ")):
            break  # the details of the failures follow: no more results
        rule = len(line) >= 20 and set(line) == {"="}
        if _SEP in line:
            desc, _, rest = line.partition(_SEP)
            desc = desc.strip()
            if not desc:
                continue
            status = _outcome(rest)
            if status is not None:
                ctx.add(desc, status, message=rest.strip()[:200] if status is TestStatus.SKIPPED
                        else None)
                pending = None
            else:
                pending = desc  # the test printed something before its outcome
            continue
        if pending is not None:
            status = _outcome(line)
            if status is not None and line.strip().split(" ", 1)[0] in (
                    "ok", "FAIL", "ERROR", "skipped", "expected", "unexpected"):
                ctx.add(pending, status)
                pending = None
