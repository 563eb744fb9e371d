"""doctest's XML reporter (``-r=xml``).

One result per ``<TestCase name=...>`` (id: the name), from ``<OverallResultsAsserts
test_case_success=...>``, plus one per subcase, ``TestCase > SubCase`` (nested subcases
joined further), as SWE-bench's doctest parser names them: a subcase fails if an
``<Expression success="false">`` or a thrown ``<Exception>`` occurs inside it. doctest runs a
test case once per subcase path, so a subcase can appear more than once; the worst
status is kept. ``skipped="true"`` test cases are SKIPPED; an exception is ERROR.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from envs.models import TestStatus
from envs.reports._xml import XmlDocument, read_xml
from envs.reports.registry import ParseContext, ReportParseError, register


def _failures(case: ET.Element) -> tuple[dict[int, bool], ET.Element | None]:
    """id(element) -> whether a failed assertion or a thrown exception lies within it, for
    every element under ``case``, and the first such exception: one post-order pass, so
    deep nesting stays linear.

    An ``<Exception>`` inside an ``<Expression>`` is what the assertion saw thrown; with
    ``-s`` a passing CHECK_THROWS logs one, so only the Expression's ``success`` counts
    there. Elsewhere an ``<Exception>`` is the test case itself throwing or crashing."""
    bad: dict[int, bool] = {}
    crashed: ET.Element | None = None
    stack: list[tuple[ET.Element, bool]] = [(case, False)]
    while stack:
        elem, children_done = stack.pop()
        if not children_done:
            stack.append((elem, True))
            if elem.tag != "Expression":  # what an assertion saw thrown is not a crash
                stack.extend((child, False) for child in reversed(list(elem)))
            continue
        if elem.tag == "Expression":
            bad[id(elem)] = elem.get("success") == "false"
            continue
        if elem.tag == "Exception":
            crashed = crashed if crashed is not None else elem
            bad[id(elem)] = True
            continue
        bad[id(elem)] = any(bad[id(child)] for child in elem)
    return bad, crashed


def _subcases(
    ctx: ParseContext, doc: XmlDocument, case: ET.Element, prefix: str, bad: dict[int, bool]
) -> None:
    # iterative walk: SubCase nesting depth comes from the input
    stack: list[tuple[ET.Element, str]] = [(case, prefix)]
    while stack:
        elem, path = stack.pop()
        for child in reversed(list(elem)):
            if child.tag != "SubCase":
                continue
            name = f"{path} > {child.get('name') or ''}"
            if doc.is_complete(child):
                ctx.add(name, TestStatus.FAILED if bad[id(child)] else TestStatus.PASSED)
            stack.append((child, name))


@register("doctest-xml", kind="structured", description="doctest -r=xml")
def parse_doctest_xml(text: str, ctx: ParseContext) -> None:
    ctx.expect_repeats = True
    doc = read_xml(text, "doctest-xml")
    if not any(r.tag == "doctest" for r in doc.roots):
        raise ReportParseError(f"doctest-xml: not a doctest report (root <{doc.roots[0].tag}>)")
    incomplete = 0
    for case in doc.iter("TestCase"):
        if not doc.is_complete(case):
            incomplete += 1
            continue
        name = case.get("name") or ""
        overall = next((c for c in case if c.tag == "OverallResultsAsserts"), None)
        bad, crashed = _failures(case)
        if (case.get("skipped") or "").lower() == "true":
            status = TestStatus.SKIPPED
        elif crashed is not None:
            status = TestStatus.ERROR
        elif overall is not None and overall.get("test_case_success") is not None:
            status = (
                TestStatus.PASSED
                if overall.get("test_case_success") == "true"
                else TestStatus.FAILED
            )
        elif overall is not None:
            failures = overall.get("failures") or "0"
            status = TestStatus.PASSED if failures.strip() in ("", "0") else TestStatus.FAILED
        else:
            status = TestStatus.FAILED if bad[id(case)] else TestStatus.PASSED
        message = (crashed.text or "").strip() or None if crashed is not None else None
        ctx.add(
            name,
            status,
            duration=(overall.get("duration") if overall is not None else None),
            message=message,
        )
        _subcases(ctx, doc, case, name, bad)
    if doc.error is not None or incomplete:
        if ctx.result_count == 0 and not any(doc.is_complete(r) for r in doc.roots):
            raise ReportParseError(
                f"doctest-xml: unreadable report ({doc.error or 'unclosed elements'})"
            )
        ctx.warn(
            "truncated",
            f"report ends early; kept {ctx.result_count} results, dropped {incomplete} test cases",
        )
