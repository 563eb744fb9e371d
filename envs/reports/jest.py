"""Jest ``--json`` and the Vitest JSON reporter (the same shape).

``testResults[].assertionResults[]``; the id is ``ancestorTitles`` and ``title`` joined
with `` > `` (``math > add > adds numbers``), exactly what SWE-bench's
JEST_JSON_JQ_TRANSFORM prints; the file is not part of it, nor are empty titles
(Vitest 1 lists the file's unnamed root suite as ``""``). Status: passed -> PASSED,
failed -> FAILED, pending/skipped/todo/disabled -> SKIPPED.

A test file that failed to run (syntax error, missing module) has no assertion results;
it becomes an ERROR result whose id is the file path, and a ``suite-failed`` warning. A
file that ran but holds no tests (a data module matching the runner's file pattern: Vitest's
"No test suite found in file", Jest's "Your test suite must contain at least one test") is
not a test: it becomes only an ``empty-file`` warning.
A truncated document (capped output) is salvaged assertion by assertion.
"""

from __future__ import annotations

import re
from typing import Any

from envs.models import TestStatus
from envs.reports._util import as_str, load_json, ms_to_s, salvage_objects, strip_ansi
from envs.reports.registry import ParseContext, ReportParseError, register

_STATUS = {
    "passed": TestStatus.PASSED,
    "failed": TestStatus.FAILED,
    "pending": TestStatus.SKIPPED,
    "skipped": TestStatus.SKIPPED,
    "todo": TestStatus.SKIPPED,
    "disabled": TestStatus.SKIPPED,
    "focused": TestStatus.PASSED,
}


def assertion_id(assertion: dict[str, Any]) -> str:
    ancestors = assertion.get("ancestorTitles")
    titles = [as_str(t) for t in ancestors] if isinstance(ancestors, list) else []
    # Vitest 1 starts ancestorTitles with the file's unnamed root suite, "": it names nothing
    titles = [t for t in titles if t.strip()]
    title = as_str(assertion.get("title"))
    if not title and not titles:
        return as_str(assertion.get("fullName"))
    return " > ".join([*titles, title])


def _add_assertion(ctx: ParseContext, assertion: Any) -> None:
    if not isinstance(assertion, dict):
        return
    raw = as_str(assertion.get("status")).lower()
    status = _STATUS.get(raw)
    test_id = assertion_id(assertion)
    if status is None:
        ctx.warn("unknown-status", f"{test_id!r} has status {raw!r}; left out")
        return
    messages = assertion.get("failureMessages")
    message = (
        strip_ansi("\n".join(as_str(m) for m in messages))
        if isinstance(messages, list) and messages
        else None
    )
    duration = assertion.get("duration")  # milliseconds
    ctx.add(
        test_id,
        status,
        duration=ms_to_s(duration),
        message=message,
    )


_NO_TESTS = re.compile(
    r"No test suite found in file|Your test suite must contain at least one test", re.I
)


def _is_report(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("testResults"), list)


def _parse(text: str, ctx: ParseContext, what: str) -> None:
    try:
        doc = load_json(text, what, _is_report)
    except ReportParseError:
        salvaged = salvage_objects(text, "ancestorTitles")
        if not salvaged:
            raise ReportParseError(
                f"{what}: no testResults array (not a Jest/Vitest JSON report)"
            ) from None
        for assertion in salvaged:
            _add_assertion(ctx, assertion)
        ctx.warn(
            "truncated", f"the JSON document is incomplete; salvaged {len(salvaged)} test results"
        )
        return
    for suite in doc["testResults"]:
        if not isinstance(suite, dict):
            continue
        assertions = suite.get("assertionResults")
        assertions = assertions if isinstance(assertions, list) else []
        for assertion in assertions:
            _add_assertion(ctx, assertion)
        failed = as_str(suite.get("status")).lower() == "failed"
        if failed and not any(
            isinstance(a, dict) and as_str(a.get("status")).lower() == "failed" for a in assertions
        ):
            name = as_str(suite.get("name")) or "<unnamed test file>"
            message = strip_ansi(as_str(suite.get("message"))).strip() or "test file failed to run"
            if not assertions and _NO_TESTS.search(message):
                ctx.warn("empty-file", f"{name}: no tests in the file; not counted")
                continue
            ctx.add(name, TestStatus.ERROR, message=message)
            ctx.warn("suite-failed", f"{name}: {message.splitlines()[0]}")


@register("jest-json", kind="structured", description="Jest --json report")
def parse_jest_json(text: str, ctx: ParseContext) -> None:
    _parse(text, ctx, "jest-json")


@register("vitest-json", kind="structured", description="Vitest --reporter=json report")
def parse_vitest_json(text: str, ctx: ParseContext) -> None:
    _parse(text, ctx, "vitest-json")
