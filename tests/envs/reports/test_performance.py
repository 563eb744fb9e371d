"""Hostile input (hostile.py) is parsed to the right, bounded report, in bounded memory.

Nothing here times the parse: how parse time grows with the input's size is measured side
by side with a one-pass baseline by `bench/reports.py`, which also reads the one-line
inputs below the 65,536 characters at which the text parsers cut a line. What is checked
here is behaviour, at 200,000 characters: the parse ends (the per-test timeout is only a
guard against a hang), the outcome is the expected one (the few results such input holds,
or a refusal that is the input's fault, never a parser bug), the report is well-formed and
bounded, and the parser's peak memory stays a small multiple of the input's size.
"""

from __future__ import annotations

import tracemalloc

import pytest

from envs import reports
from envs.reports.registry import MAX_ID, MAX_WARNINGS

from .hostile import CASES, N, case_id
from .test_properties import check

# Peak memory allocated while parsing, per byte of input. The worst input today needs about
# 11 (50,000 XML elements, each an object); a parser that copied the input per line, or kept
# every rescan, would need thousands.
MEMORY_PER_BYTE = 32
MEMORY_SLACK = 1 << 20


@pytest.mark.timeout(120)  # a hang guard only: these inputs take milliseconds to parse
@pytest.mark.parametrize("case", CASES, ids=[case_id(i, c) for i, c in enumerate(CASES)])
def test_hostile_input_gives_the_expected_bounded_report(case):
    data = case.data()
    assert len(data) >= 0.99 * N or not case.scales
    tracemalloc.start()
    try:
        report = check(case.fmt, data)  # well-formed, or refused without a parser bug
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= MEMORY_PER_BYTE * len(data.encode()) + MEMORY_SLACK, (
        f"parsing {len(data)} characters peaked at {peak} bytes")
    if isinstance(case.expect, str):
        assert report is None, "hostile input of the wrong shape must be refused"
        with pytest.raises(reports.ReportParseError, match=case.expect) as refused:
            reports.parse(case.fmt, data, exit_code=1)
        assert not refused.value.internal
        return
    assert report is not None
    assert {r.test_id: r.status.value for r in report.results} == case.expect
    assert len(report.warnings) <= MAX_WARNINGS + 1
    assert all(len(r.test_id) <= MAX_ID for r in report.results)
