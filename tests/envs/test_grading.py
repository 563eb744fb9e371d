"""Grading, as a specification. SWE-bench semantics with its later (HEAD, v5) fixes."""

from __future__ import annotations

import json

import pytest

from envs import reports
from envs.grading import (
    FAIL_TO_PASS,
    MISSING,
    PASS_TO_PASS,
    EvalType,
    GradeReport,
    Resolution,
    grade,
)
from envs.models import FailureKind, TestResult
from envs.models import TestStatus as St
from envs.reports import ParsedReport


def results(**statuses: str) -> list[TestResult]:
    return [TestResult(test_id=k, status=St(v)) for k, v in statuses.items()]


def report(exit_code: int | None, **statuses: str) -> ParsedReport:
    return ParsedReport("pytest", tuple(results(**statuses)), exit_code)


class TestWhatPasses:
    def test_resolved_when_every_fail_to_pass_and_pass_to_pass_test_passes(self):
        g = grade(results(f1="PASSED", f2="PASSED", p1="PASSED"), ["f1", "f2"], ["p1"])
        assert g.resolved and g.resolution is Resolution.FULL and g.reward == 1.0
        assert g.reason == "resolved"
        assert g.fail_to_pass.success == ["f1", "f2"] and g.pass_to_pass.success == ["p1"]

    def test_xfail_counts_as_a_pass(self):
        assert grade(results(f="XFAIL", p="XFAIL"), ["f"], ["p"]).resolved

    @pytest.mark.parametrize("status", ["FAILED", "ERROR", "SKIPPED"])
    def test_a_fail_to_pass_test_that_fails_errors_or_skips_is_not_fixed(self, status):
        g = grade(results(f=status, p="PASSED"), ["f"], ["p"])
        assert not g.resolved and g.reward == 0.0
        assert g.fail_to_pass.failure == ["f"]
        assert g.observed == {"f": status, "p": "PASSED"}

    def test_a_skipped_pass_to_pass_test_is_maintained(self):
        # SWE-bench HEAD's test_maintained: a test skipped (e.g. for its platform) is not
        # a regression; only FAIL_TO_PASS requires an actual pass
        g = grade(results(f="PASSED", p="SKIPPED"), ["f"], ["p"])
        assert g.resolved and g.pass_to_pass.success == ["p"]

    @pytest.mark.parametrize("status", ["FAILED", "ERROR"])
    def test_a_broken_pass_to_pass_test_is_a_regression(self, status):
        g = grade(results(f="PASSED", p=status), ["f"], ["p"])
        assert not g.resolved and g.resolution is Resolution.NO
        assert g.pass_to_pass.failure == ["p"]
        assert g.reason == "1/1 PASS_TO_PASS failed (p)"

    def test_a_test_missing_from_the_results_failed(self):
        g = grade(results(p="PASSED"), ["f"], ["p", "p2"])
        assert g.fail_to_pass.failure == ["f"] and g.pass_to_pass.failure == ["p2"]
        assert g.observed["f"] == MISSING
        assert not g.resolved


class TestResolution:
    def test_partial_when_some_fail_to_pass_pass_and_nothing_regressed(self):
        g = grade(results(f1="PASSED", f2="FAILED", p="PASSED"), ["f1", "f2"], ["p"])
        assert g.resolution is Resolution.PARTIAL and not g.resolved and g.reward == 0.0
        assert g.reason == "1/2 FAIL_TO_PASS failed (f2)"

    def test_no_when_a_regression_accompanies_a_partial_fix(self):
        g = grade(results(f1="PASSED", f2="FAILED", p="FAILED"), ["f1", "f2"], ["p"])
        assert g.resolution is Resolution.NO

    def test_no_when_no_fail_to_pass_test_passes(self):
        assert grade(results(f="FAILED"), ["f"], []).resolution is Resolution.NO

    def test_an_empty_pass_to_pass_list_scores_one(self):
        assert grade(results(f="PASSED"), ["f"], []).resolved

    def test_empty_lists_resolve_trivially_as_in_swebench(self):
        # e.g. tokio-rs__axum-1730 has an empty FAIL_TO_PASS
        g = grade([], [], [])
        assert g.resolved and "no FAIL_TO_PASS" in g.reason

    def test_rates(self):
        g = grade(
            results(f1="PASSED", f2="FAILED", f3="FAILED", p="PASSED"), ["f1", "f2", "f3"], ["p"]
        )
        assert g.fail_to_pass.rate == pytest.approx(1 / 3) and g.pass_to_pass.rate == 1.0

    def test_swebench_json_test_lists_are_accepted(self):
        g = grade(results(f="PASSED", p="PASSED"), json.dumps(["f"]), json.dumps(["p"]))
        assert g.resolved


class TestFailureKinds:
    @pytest.mark.parametrize("kind", [k for k in FailureKind if k is not FailureKind.NONE])
    def test_a_run_failure_is_never_resolved_and_says_so(self, kind):
        # even when every listed test passed before, say, the timeout hit
        g = grade(results(f="PASSED", p="PASSED"), ["f"], ["p"], failure_kind=kind)
        assert not g.resolved and g.resolution is Resolution.NO and g.reward == 0.0
        assert g.failure_kind is kind
        assert kind.value in g.reason and "resolved" in g.reason  # "...; not graded as resolved"
        assert g.reason != "unresolved"

    @pytest.mark.parametrize(
        ("kind", "infra"),
        [
            (FailureKind.BUILD_FAILED, True),
            (FailureKind.ENV_COLLAPSE, True),
            (FailureKind.VERIFIER_ERROR, True),
            (FailureKind.TIMEOUT, False),  # the patch may have caused it
            (FailureKind.OOM, False),
            (FailureKind.PATCH_FAILED, False),
            (FailureKind.MODEL, False),
        ],
    )
    def test_infrastructure_kinds_are_marked_for_trainers_to_drop(self, kind, infra):
        g = grade([], ["f"], [], failure_kind=kind)
        assert g.is_infrastructure is infra
        assert g.reason.startswith("infrastructure failure" if infra else "run failed")

    def test_buckets_are_still_reported_for_diagnosis(self):
        g = grade(results(f="PASSED"), ["f"], [], failure_kind=FailureKind.TIMEOUT)
        assert g.fail_to_pass.success == ["f"]


class TestExitCodeCrossCheck:
    def test_all_passed_but_nonzero_exit_is_not_trusted(self):
        # SWE-bench #620: a patch can print its own PASSED lines
        g = grade(report(1, f="PASSED", p="PASSED"), ["f"], ["p"])
        assert not g.resolved and g.resolution is Resolution.NO
        assert "exited 1" in g.reason and g.report_consistent is False
        assert g.failure_kind is FailureKind.NONE  # graded: the model's run, not the infra

    def test_nonzero_exit_with_failures_elsewhere_is_fine(self):
        g = grade(report(1, f="PASSED", p="PASSED", other="FAILED"), ["f"], ["p"])
        assert g.resolved and g.report_consistent is True and g.exit_code == 1

    def test_a_part_of_the_suite_that_failed_as_a_whole_explains_the_exit(self):
        # a test binary that aborted before its summary (a crate that did not compile, a
        # suite file that threw): its tests have no results, the others are trusted
        crashed = ParsedReport("libtest", tuple(results(f="PASSED", p="PASSED")), 101,
                               (reports.ReportWarning("package-failed", "ffi crashed"),))
        g = grade(crashed, ["f"], ["p"])
        assert g.resolved and g.report_consistent is True
        assert "failed as a whole" in g.warnings[-1]
        assert not grade(crashed, ["f", "in_the_crashed_binary"], ["p"]).resolved

    def test_other_warnings_do_not_explain_a_nonzero_exit(self):
        odd = ParsedReport("libtest", tuple(results(f="PASSED")), 1,
                           (reports.ReportWarning("truncated", "cut"),))
        assert not grade(odd, ["f"], []).resolved

    def test_the_check_can_be_turned_off(self):
        assert grade(report(1, f="PASSED"), ["f"], [], check_exit_code=False).resolved

    def test_failures_with_exit_zero_only_warn(self):
        g = grade(report(0, f="PASSED", other="FAILED"), ["f"], [])
        assert g.resolved and "exited 0" in g.warnings[-1]

    def test_plain_results_have_no_exit_code_to_check(self):
        g = grade(results(f="PASSED"), ["f"], [])
        assert g.resolved and g.report_consistent is None and g.exit_code is None


class TestTruncatedIds:
    """SWE-bench's pytest parser split lines on whitespace, so some expected ids end
    mid-parameter (SWE-bench #290). Matching is by whitespace-bounded prefix only."""

    FULL = "tests/test_format.py::test_ogip_grammar_fail[log(photon /m**2 /s /Hz)]"
    CUT = "tests/test_format.py::test_ogip_grammar_fail[log(photon"

    def test_a_truncated_expected_id_matches_the_full_result_id(self):
        g = grade({self.FULL: "PASSED"}, [self.CUT], [])
        assert g.resolved and g.matched == {self.CUT: [self.FULL]}
        assert g.observed[self.CUT] == "PASSED"

    def test_it_fails_when_the_full_test_fails(self):
        assert not grade({self.FULL: "FAILED"}, [self.CUT], []).resolved

    def test_all_tests_behind_a_truncated_id_must_pass(self):
        other = self.CUT + " cm)]"
        assert grade({self.FULL: "PASSED", other: "PASSED"}, [self.CUT], []).resolved
        g = grade({self.FULL: "PASSED", other: "FAILED"}, [self.CUT], [])
        assert not g.resolved and g.matched[self.CUT] == sorted([self.FULL, other])
        assert any("disagree" in w for w in g.warnings)

    def test_a_truncated_result_id_matches_the_full_expected_id(self):
        # results from a whitespace-splitting parser, expected ids whole
        g = grade({self.CUT: "PASSED"}, [self.FULL], [])
        assert g.resolved and g.matched == {self.FULL: [self.CUT]}

    def test_an_exact_match_wins_over_a_prefix(self):
        g = grade({self.CUT: "FAILED", self.FULL: "PASSED"}, [self.CUT], [])
        assert not g.resolved and g.matched == {}

    @pytest.mark.parametrize(
        ("expected", "result_id"),
        [
            ("test_a", "test_ab"),  # balanced brackets: never prefix-matched
            ("test_a", "test_a b"),
            ("t.py::test_p[a", "t.py::test_p[ab]"),  # not cut at whitespace
            ("t.py::test_p[a]", "t.py::test_p[a] b"),  # a complete id
            ("t.py::test_p[a b]", "t.py::test_p[a c]"),  # result not truncated
        ],
    )
    def test_nothing_else_is_prefix_matched(self, expected, result_id):
        g = grade({result_id: "PASSED"}, [expected], [])
        assert not g.resolved and g.observed[expected] == MISSING

    def test_works_in_pass_to_pass_with_its_skip_rule(self):
        assert grade({"f": "PASSED", self.FULL: "SKIPPED"}, ["f"], [self.CUT]).resolved


class TestTitleIds:
    """SWE-bench's Jest parser keeps the title alone; our Jest ids hold the describe path."""

    def test_a_title_matches_the_result_it_ends(self):
        g = grade({"scope > rename > works": "PASSED", "other": "PASSED"}, ["works"], ["other"])
        assert g.resolved and g.matched == {"works": ["scope > rename > works"]}

    def test_every_test_of_that_title_must_pass(self):
        both = {"a > works": "PASSED", "b > works": "FAILED"}
        g = grade(both, ["works"], [])
        assert not g.resolved and g.matched["works"] == ["a > works", "b > works"]

    @pytest.mark.parametrize(("expected", "result_id"), [
        ("works", "scope > it works"),  # a whole last part only
        ("rename > works", "scope > rename > works"),  # a path is matched whole
        ("scope", "scope > works"),
    ])
    def test_nothing_else_is_title_matched(self, expected, result_id):
        g = grade({result_id: "PASSED"}, [expected], [])
        assert not g.resolved and g.observed[expected] == MISSING

    def test_an_exact_match_wins(self):
        g = grade({"works": "FAILED", "s > works": "PASSED"}, ["works"], [])
        assert not g.resolved


class TestInputs:
    def test_a_parsed_report(self):
        parsed = reports.parse(
            "pytest", b"PASSED t.py::f\nPASSED t.py::p\nFAILED t.py::other - x\n", exit_code=1
        )
        g = grade(parsed, ["t.py::f"], ["t.py::p"])
        assert g.resolved and g.report_format == "pytest"

    def test_a_swebench_status_map(self):
        assert grade({"f": "PASSED", "p": "SKIPPED"}, ["f"], ["p"]).resolved

    def test_duplicate_results_keep_the_worst_status(self):
        g = grade(results(f="PASSED") + results(f="ERROR"), ["f"], [])
        assert not g.resolved and g.observed["f"] == "ERROR"

    def test_report_warnings_are_carried_over(self):
        parsed = reports.parse("junit", '<testsuite><testcase classname="a" name="f"/><testcase cl')
        g = grade(parsed, ["a#f"], [])
        assert g.resolved and any(w.startswith("truncated") for w in g.warnings)


class TestFailOnly:
    """SWE-bench's FAIL_ONLY repos: the runner reports failures only."""

    def test_only_an_explicit_failure_fails(self):
        g = grade(
            results(f="PASSED", other="ERROR"), ["f", "absent"], ["p"], eval_type=EvalType.FAIL_ONLY
        )
        assert g.resolved

    def test_an_explicit_failure(self):
        assert not grade(results(f="FAILED"), ["f"], [], eval_type=EvalType.FAIL_ONLY).resolved

    def test_no_results_at_all_cannot_resolve(self):
        g = grade([], ["f"], [], eval_type=EvalType.FAIL_ONLY)
        assert not g.resolved and g.reason == "no test results"


class TestReportShape:
    def test_json_round_trip(self):
        g = grade(results(f="PASSED", p="FAILED"), ["f"], ["p"])
        dumped = g.model_dump(mode="json")
        assert json.loads(json.dumps(dumped)) == dumped
        assert GradeReport.model_validate(dumped) == g
        assert dumped["tests_status"] == {
            FAIL_TO_PASS: {"success": ["f"], "failure": []},
            PASS_TO_PASS: {"success": [], "failure": ["p"]},
        }
        assert dumped["resolution"] == "RESOLVED_NO" and dumped["failure_kind"] == "NONE"

    def test_swebench_report_entry(self):
        entry = grade(results(f="PASSED"), ["f"], []).to_swebench()
        assert entry["resolved"] is True and entry["patch_successfully_applied"] is True
        assert set(entry["tests_status"]) == {
            "FAIL_TO_PASS",
            "PASS_TO_PASS",
            "FAIL_TO_FAIL",
            "PASS_TO_FAIL",
        }
        failed_apply = grade([], ["f"], [], failure_kind=FailureKind.PATCH_FAILED).to_swebench()
        assert (
            failed_apply["patch_successfully_applied"] is False
            and failed_apply["resolved"] is False
        )

    def test_the_report_is_frozen(self):
        g = grade([], [], [])
        with pytest.raises(ValueError):
            g.resolved = False  # type: ignore[misc]
