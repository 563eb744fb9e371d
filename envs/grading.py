"""Grading: per-test results against FAIL_TO_PASS / PASS_TO_PASS, with SWE-bench's
semantics and the fixes its harness made later (SWE-bench HEAD, v5).

- A test passes when it is PASSED or XFAIL. A test absent from the results failed.
- FAIL_TO_PASS: only a pass is a success; FAILED, ERROR, SKIPPED and missing are failures
  (a patch that makes the target tests skip has not fixed anything).
- PASS_TO_PASS: a pass or a SKIPPED is a success ("maintained": a test skipped for its
  platform is not a regression); FAILED, ERROR and missing are failures.
- Resolution as SWE-bench: RESOLVED_FULL when both rates are 1 (an empty list scores 1),
  RESOLVED_PARTIAL when 0 < FAIL_TO_PASS rate < 1 and PASS_TO_PASS rate is 1, else
  RESOLVED_NO. ``resolved`` is RESOLVED_FULL; ``reward`` is 1.0 for it, else 0.0.
- Truncated ids: SWE-bench's pytest parser split log lines on whitespace, so expected
  ids such as ``test_ogip_grammar_fail[log(photon`` are cut at a space inside a parameter
  (SWE-bench #290). An expected id with more ``[`` than ``]`` that is not itself a result
  matches the result ids it is a prefix of, where the result id continues with whitespace
  right after it; it succeeds only if all those results succeed. Conversely, a result id
  cut that way (more ``[`` than ``]``) matches the expected ids that continue it with
  whitespace. No other id is ever prefix-matched, so ``test_a`` never matches ``test_ab``.
- Title ids: SWE-bench's Jest parser keeps a test's title alone (``works`` for our
  ``scope > rename > works``). An expected id without `` > `` that is not itself a result
  matches the result ids whose last `` > `` part it is; it succeeds only if all of them do.
- A report that says no test failed while the test command exited non-zero is not
  trusted (SWE-bench #620: a patch can print fake PASSED lines); it is RESOLVED_NO.
- Infrastructure and other run failures (``failure_kind`` other than NONE: the build
  broke, a timeout, OOM, the container died, the patch did not apply) are never graded
  as an ordinary "unresolved": ``resolved`` is False, ``failure_kind`` is set, and the
  reason says which; ``is_infrastructure`` tells a trainer to drop the sample.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterable, Mapping, Sequence
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from envs.models import FailureKind, TestResult, TestStatus
from envs.reports.ids import JS_SEP as _JS_SEP
from envs.reports.registry import STATUS_RANK, ParsedReport

FAIL_TO_PASS = "FAIL_TO_PASS"
PASS_TO_PASS = "PASS_TO_PASS"
MISSING = "MISSING"

_PASSING = frozenset({TestStatus.PASSED, TestStatus.XFAIL})
_MAINTAINED = _PASSING | {TestStatus.SKIPPED}


class Resolution(str, Enum):
    FULL = "RESOLVED_FULL"
    PARTIAL = "RESOLVED_PARTIAL"
    NO = "RESOLVED_NO"


class EvalType(str, Enum):
    PASS_AND_FAIL = "pass_and_fail"
    # SWE-bench's FAIL_ONLY repos: only an explicit FAILED is a failure (their runners
    # report failures only); a run with no results at all still cannot resolve.
    FAIL_ONLY = "fail_only"


class Bucket(BaseModel):
    model_config = ConfigDict(frozen=True)

    success: list[str] = Field(default_factory=list)
    failure: list[str] = Field(default_factory=list)

    @property
    def rate(self) -> float:
        total = len(self.success) + len(self.failure)
        return 1.0 if total == 0 else len(self.success) / total


class GradeReport(BaseModel):
    """The verdict on one run, JSON-serialisable (``model_dump(mode="json")``)."""

    model_config = ConfigDict(frozen=True)

    resolved: bool
    resolution: Resolution
    failure_kind: FailureKind = FailureKind.NONE
    reward: float
    reason: str
    # SWE-bench's report shape: {"FAIL_TO_PASS": {"success": [...], "failure": [...]}, ...}
    tests_status: dict[str, Bucket]
    # expected id -> the status it was graded on (the worst of its matches), or MISSING
    observed: dict[str, str] = Field(default_factory=dict)
    # expected id -> result ids it matched other than exactly (truncated ids)
    matched: dict[str, list[str]] = Field(default_factory=dict)
    exit_code: int | None = None
    report_format: str | None = None
    report_consistent: bool | None = None
    warnings: list[str] = Field(default_factory=list)

    @property
    def fail_to_pass(self) -> Bucket:
        return self.tests_status[FAIL_TO_PASS]

    @property
    def pass_to_pass(self) -> Bucket:
        return self.tests_status[PASS_TO_PASS]

    @property
    def is_infrastructure(self) -> bool:
        """True when the environment, not the model, decided the outcome: drop, don't learn."""
        return self.failure_kind.is_infrastructure

    def to_swebench(self) -> dict[str, Any]:
        """The per-instance entry of SWE-bench's report.json."""
        buckets = {k: v.model_dump() for k, v in self.tests_status.items()}
        for extra in ("FAIL_TO_FAIL", "PASS_TO_FAIL"):
            buckets.setdefault(extra, {"success": [], "failure": []})
        return {
            "patch_is_None": False,
            "patch_exists": True,
            "patch_successfully_applied": self.failure_kind is not FailureKind.PATCH_FAILED,
            "resolved": self.resolved,
            "tests_status": buckets,
        }


def _unbalanced(test_id: str) -> bool:
    return test_id.count("[") > test_id.count("]")


class _Lookup:
    """Result statuses by id, with the truncated-id matching described in the module doc."""

    def __init__(self, statuses: Mapping[str, TestStatus]):
        self.statuses = statuses
        self.sorted_ids = sorted(statuses)
        self.truncated_results = sorted(
            (t for t in statuses if _unbalanced(t)), key=len, reverse=True
        )
        self.by_title: dict[str, list[str]] = {}
        for t in statuses:
            if _JS_SEP in t:
                self.by_title.setdefault(t.rsplit(_JS_SEP, 1)[1], []).append(t)

    def find(self, expected: str) -> list[str]:
        if expected in self.statuses:
            return [expected]
        found: list[str] = []
        if _unbalanced(expected):
            i = bisect.bisect_right(self.sorted_ids, expected)
            n = len(expected)
            while i < len(self.sorted_ids) and self.sorted_ids[i].startswith(expected):
                candidate = self.sorted_ids[i]
                if candidate[n].isspace():
                    found.append(candidate)
                i += 1
            if found:
                return found
        for result_id in self.truncated_results:  # longest first
            n = len(result_id)
            if len(expected) > n and expected.startswith(result_id) and expected[n].isspace():
                return [result_id]
        if _JS_SEP not in expected:
            return list(self.by_title.get(expected, ()))
        return []


def _status_map(
    results: Iterable[TestResult] | ParsedReport | Mapping[str, TestStatus | str],
) -> dict[str, TestStatus]:
    if isinstance(results, ParsedReport):
        items: Iterable[tuple[str, TestStatus | str]] = (
            (r.test_id, r.status) for r in results.results
        )
    elif isinstance(results, Mapping):
        items = results.items()
    else:
        items = ((r.test_id, r.status) for r in results)
    statuses: dict[str, TestStatus] = {}
    for test_id, raw in items:
        status = TestStatus(raw)
        old = statuses.get(test_id)
        # duplicates: the worst status stands, as in the report parsers
        if old is None or STATUS_RANK[status] > STATUS_RANK[old]:
            statuses[test_id] = status
    return statuses


def _ids(value: Sequence[str] | str | None) -> list[str]:
    """A test list, also in the JSON-string form of the SWE-bench HF datasets."""
    if value is None:
        return []
    if isinstance(value, str):
        value = value.strip()
        parsed = json.loads(value) if value else []
        if not isinstance(parsed, list):
            raise ValueError("a test list given as a string must be a JSON list")
        value = parsed
    return [str(v) for v in value]


def _few(ids: list[str], limit: int = 3) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f", +{len(ids) - limit} more" if len(ids) > limit else "")


def grade(
    results: Iterable[TestResult] | ParsedReport | Mapping[str, TestStatus | str],
    fail_to_pass: Sequence[str] | str,
    pass_to_pass: Sequence[str] | str = (),
    *,
    failure_kind: FailureKind = FailureKind.NONE,
    eval_type: EvalType = EvalType.PASS_AND_FAIL,
    check_exit_code: bool = True,
) -> GradeReport:
    """Grade one run's test results against the task's FAIL_TO_PASS and PASS_TO_PASS."""
    report = results if isinstance(results, ParsedReport) else None
    statuses = _status_map(results)
    lookup = _Lookup(statuses)
    f2p_ids, p2p_ids = _ids(fail_to_pass), _ids(pass_to_pass)
    observed: dict[str, str] = {}
    matched: dict[str, list[str]] = {}
    warnings: list[str] = list(report.warnings) if report else []

    def judge(expected: str, ok: frozenset[TestStatus]) -> bool:
        keys = lookup.find(expected)
        if keys and keys != [expected]:
            matched[expected] = keys
        if not keys:
            observed[expected] = MISSING
            return eval_type is EvalType.FAIL_ONLY  # absent: a failure, unless FAIL_ONLY
        found = [statuses[k] for k in keys]
        observed[expected] = max(found, key=STATUS_RANK.__getitem__).value
        if eval_type is EvalType.FAIL_ONLY:
            return TestStatus.FAILED not in found
        if len({s in ok for s in found}) > 1:
            warnings.append(
                f"truncated id {expected!r} matches tests that disagree; graded as failed"
            )
        return all(s in ok for s in found)

    def bucket(ids: list[str], ok: frozenset[TestStatus]) -> Bucket:
        verdicts = [(expected, judge(expected, ok)) for expected in ids]
        return Bucket(
            success=[e for e, good in verdicts if good],
            failure=[e for e, good in verdicts if not good],
        )

    f2p, p2p = bucket(f2p_ids, _PASSING), bucket(p2p_ids, _MAINTAINED)

    if f2p.rate == 1 and p2p.rate == 1:
        resolution = Resolution.FULL
    elif 0 < f2p.rate < 1 and p2p.rate == 1:
        resolution = Resolution.PARTIAL
    else:
        resolution = Resolution.NO

    exit_code = report.exit_code if report else None
    consistent = report.consistent if report else None
    if failure_kind is not FailureKind.NONE:
        kind = "infrastructure failure" if failure_kind.is_infrastructure else "run failed"
        reason = f"{kind}: {failure_kind.value}; not graded as resolved"
        resolution = Resolution.NO
    elif check_exit_code and report and exit_code not in (None, 0) and not consistent:
        reason = (
            f"the report shows no failing test but the test command exited {exit_code}; "
            "the report is not trusted"
        )
        resolution = Resolution.NO
    elif not statuses and (eval_type is EvalType.FAIL_ONLY or f2p_ids or p2p_ids):
        reason = "no test results"
        resolution = Resolution.NO
    elif resolution is Resolution.FULL:
        reason = (
            "resolved" if f2p_ids or p2p_ids else "resolved (no FAIL_TO_PASS or PASS_TO_PASS tests)"
        )
    else:
        parts = []
        if f2p.failure:
            parts.append(
                f"{len(f2p.failure)}/{len(f2p_ids)} FAIL_TO_PASS failed ({_few(f2p.failure)})"
            )
        if p2p.failure:
            parts.append(
                f"{len(p2p.failure)}/{len(p2p_ids)} PASS_TO_PASS failed ({_few(p2p.failure)})"
            )
        reason = "; ".join(parts)
    if report and exit_code == 0 and report.has_failures:
        warnings.append("tests failed although the test command exited 0")
    elif report and exit_code not in (None, 0) and not report.has_failures and consistent:
        warnings.append(f"the test command exited {exit_code} with no failing test: a part "
                        "of the suite failed as a whole (its tests have no results)")

    resolved = resolution is Resolution.FULL
    return GradeReport(
        resolved=resolved,
        resolution=resolution,
        failure_kind=failure_kind,
        reward=1.0 if resolved else 0.0,
        reason=reason,
        tests_status={FAIL_TO_PASS: f2p, PASS_TO_PASS: p2p},
        observed=observed,
        matched=matched,
        exit_code=exit_code,
        report_format=report.format if report else None,
        report_consistent=consistent,
        warnings=warnings,
    )
