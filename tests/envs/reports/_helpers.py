"""Helpers shared by the report parser tests."""

from __future__ import annotations

from envs.models import TestStatus
from envs.reports import ParsedReport


def statuses(report: ParsedReport) -> dict[str, TestStatus]:
    return {r.test_id: r.status for r in report.results}


P, F, E, S, X = (
    TestStatus.PASSED,
    TestStatus.FAILED,
    TestStatus.ERROR,
    TestStatus.SKIPPED,
    TestStatus.XFAIL,
)
