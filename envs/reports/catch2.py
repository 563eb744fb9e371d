"""Catch2's XML reporter (``-r xml``), v2 (``<Catch>``) and v3 (``<Catch2TestRun>``).

One result per ``<TestCase name=...>``, the id being the test case name. Its
``<OverallResult success=...>`` decides: true is PASSED (SKIPPED when it records
skips, Catch2 3.3+ ``SKIP()``); false is FAILED, or ERROR when an unexpected exception
or fatal error condition ended the test. Test cases cut off by truncation are dropped.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from envs.models import TestStatus
from envs.reports._xml import iter_within, read_xml
from envs.reports.registry import ParseContext, ReportParseError, register


def _int(value: str | None) -> int:
    try:
        return int(value or 0)
    except ValueError:
        return 0


@register("catch2-xml", kind="structured", description="Catch2 -r xml")
def parse_catch2_xml(text: str, ctx: ParseContext) -> None:
    doc = read_xml(text, "catch2-xml")
    if not any(r.tag in ("Catch", "Catch2TestRun") for r in doc.roots):
        raise ReportParseError(f"catch2-xml: not a Catch2 report (root <{doc.roots[0].tag}>)")
    incomplete = 0
    for case in doc.iter("TestCase"):
        if not doc.is_complete(case):
            incomplete += 1
            continue
        overall = next((c for c in case if c.tag == "OverallResult"), None)
        name = case.get("name") or ""
        if overall is None:
            ctx.add(
                name, TestStatus.ERROR, message="no OverallResult: the test case did not finish"
            )
            continue
        crashed = next(iter_within(case, "Exception", "FatalErrorCondition"), None)
        if (overall.get("success") or "").lower() == "true":
            status = TestStatus.SKIPPED if _int(overall.get("skips")) > 0 else TestStatus.PASSED
            message = None
        else:
            status = TestStatus.ERROR if crashed is not None else TestStatus.FAILED
            failing = (
                crashed
                if crashed is not None
                else next(
                    (
                        e
                        for e in iter_within(case, "Expression", "Failure")
                        if e.tag == "Failure" or e.get("success") == "false"
                    ),
                    None,
                )
            )
            message = _describe(failing)
        ctx.add(name, status, duration=overall.get("durationInSeconds"), message=message)
    if doc.error is not None or incomplete:
        if ctx.result_count == 0 and not any(doc.is_complete(r) for r in doc.roots):
            raise ReportParseError(
                f"catch2-xml: unreadable report ({doc.error or 'unclosed elements'})"
            )
        ctx.warn(
            "truncated",
            f"report ends early; kept {ctx.result_count} test cases, dropped {incomplete}",
        )


def _describe(elem: ET.Element | None) -> str | None:
    if elem is None:
        return None
    if elem.tag == "Expression":
        original = next((c.text for c in elem if c.tag == "Original"), None) or ""
        expanded = next((c.text for c in elem if c.tag == "Expanded"), None) or ""
        return (
            f"{elem.get('type', 'CHECK')}( {original.strip()} ) with expansion: {expanded.strip()}"
        )
    return (elem.text or "").strip() or elem.tag
