"""Mocha ``--reporter json``: ``passes`` / ``failures`` / ``pending`` arrays.

Id: ``titlePath`` joined with `` > `` when the reporter provides it (custom and newer
reporters), else ``fullTitle`` -- mocha's own json reporter joins suite and test titles
with single spaces, which is what SWE-bench's mocha-based parsers use. ``mocha-json:fulltitle``
forces ``fullTitle``. A failing hook (``"before all" hook for "x"``) is an ERROR.
When only the ``tests`` array is present, a non-empty ``err`` means FAILED.
"""

from __future__ import annotations

import re
from typing import Any

from envs.models import TestStatus
from envs.reports._util import as_str, load_json, ms_to_s, strip_ansi
from envs.reports.registry import ParseContext, ReportParseError, register

_HOOK = re.compile(r'^"(before|after) (all|each)" hook')


def _test_id(test: dict[str, Any], prefer_path: bool) -> str:
    path = test.get("titlePath")
    if prefer_path and isinstance(path, list) and path:
        return " > ".join(as_str(p) for p in path)
    full = as_str(test.get("fullTitle"))
    return full or as_str(test.get("title"))


def _message(test: dict[str, Any]) -> str | None:
    err = test.get("err")
    if isinstance(err, dict) and err:
        return strip_ansi(as_str(err.get("message") or err.get("stack") or "")) or None
    return None


def _is_report(doc: Any) -> bool:
    return isinstance(doc, dict) and any(
        isinstance(doc.get(k), list) for k in ("passes", "failures", "pending", "tests")
    )


@register(
    "mocha-json",
    kind="structured",
    variants=("titlepath", "fulltitle"),
    description="mocha --reporter json",
)
def parse_mocha_json(text: str, ctx: ParseContext) -> None:
    try:
        doc = load_json(text, "mocha-json", _is_report)
    except ReportParseError as exc:
        raise ReportParseError(f"mocha-json: no passes/failures/pending arrays ({exc})") from None
    prefer_path = ctx.variant != "fulltitle"
    arrays = {
        "passes": TestStatus.PASSED,
        "failures": TestStatus.FAILED,
        "pending": TestStatus.SKIPPED,
    }
    if any(isinstance(doc.get(k), list) for k in arrays):
        for key, status in arrays.items():
            items = doc.get(key)
            for test in items if isinstance(items, list) else []:
                if not isinstance(test, dict):
                    continue
                this = status
                if status is TestStatus.FAILED and _HOOK.match(as_str(test.get("title"))):
                    this = TestStatus.ERROR
                ctx.add(
                    _test_id(test, prefer_path),
                    this,
                    duration=ms_to_s(test.get("duration")),
                    message=_message(test) if this is not TestStatus.PASSED else None,
                )
        return
    for test in doc["tests"]:
        if not isinstance(test, dict):
            continue
        if test.get("pending") is True:
            status = TestStatus.SKIPPED
        elif _message(test) is not None or (isinstance(test.get("err"), dict) and test["err"]):
            status = TestStatus.FAILED
        else:
            status = TestStatus.PASSED
        ctx.add(
            _test_id(test, prefer_path),
            status,
            duration=ms_to_s(test.get("duration")),
            message=_message(test),
        )
