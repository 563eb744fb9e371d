"""The façade: format lookup, ParsedReport, duplicates, decoding, parse_best."""

from __future__ import annotations

import json

import pytest

from envs import reports
from envs.models import TestResult
from envs.reports import ParsedReport, ReportParseError, ReportWarning, UnknownFormatError
from envs.reports import registry as registry_module

from ._helpers import E, F, P, S, X, statuses
from .test_junit import SUREFIRE


def test_formats_are_registered():
    assert set(reports.formats()) >= {
        "junit", "pytest", "gotest-json", "gotest", "tap", "jest-json", "vitest-json",
        "mocha-json", "minitest", "rspec-json", "automake", "catch2-xml", "doctest-xml",
        "phpunit-testdox", "libtest", "exitcode", "plain",
    }  # fmt: skip


def test_unknown_format_is_a_typed_error_listing_the_known_ones():
    with pytest.raises(UnknownFormatError) as info:
        reports.parse("nunit", b"")
    assert isinstance(info.value, ReportParseError) and isinstance(info.value, ValueError)
    assert "junit" in info.value.known
    assert "known formats: automake," in str(info.value)


def test_format_names_are_case_and_space_insensitive():
    assert reports.parse(" JUnit : Java ", SUREFIRE).format == "junit:java"


def test_register_adds_a_format_and_refuses_a_taken_name():
    @reports.register("test-only-format", kind="text")
    def parse_it(text: str, ctx: reports.ParseContext) -> None:
        for line in text.split():
            ctx.add(line, P)

    try:
        assert "test-only-format" in reports.formats()
        assert statuses(reports.parse("test-only-format", b"a b")) == {"a": P, "b": P}
        with pytest.raises(ValueError, match="already registered"):
            reports.register("test-only-format")(parse_it)
    finally:
        registry_module._REGISTRY.pop("test-only-format")


def test_a_parser_bug_surfaces_as_an_internal_report_parse_error():
    @reports.register("test-broken-format")
    def broken(text: str, ctx: reports.ParseContext) -> None:
        raise KeyError("oops")

    try:
        with pytest.raises(ReportParseError) as info:
            reports.parse("test-broken-format", b"")
        assert info.value.internal and info.value.format == "test-broken-format"
    finally:
        registry_module._REGISTRY.pop("test-broken-format")


def test_invalid_utf8_is_replaced_not_fatal():
    data = b"PASSED a.py::t[\xff\xfe]\nFAILED a.py::u - \xc3\x28\n"
    report = reports.parse("pytest", data)
    assert statuses(report) == {"a.py::t[\ufffd\ufffd]": P, "a.py::u": F}


def test_lone_surrogates_in_str_input_are_replaced():
    report = reports.parse(
        "junit", '<testsuite><testcase classname="a" name="t\udc80"/></testsuite>'
    )
    assert report.results[0].test_id == "a#t\ufffd"


def test_a_bom_is_ignored():
    assert reports.parse("jest-json", "\ufeff" + json.dumps({"testResults": []})).results == ()


def _report(*pairs: tuple[str, object], exit_code: int | None) -> ParsedReport:
    return ParsedReport("x", tuple(TestResult(test_id=i, status=s) for i, s in pairs), exit_code)


@pytest.mark.parametrize(
    ("pairs", "exit_code", "consistent"),
    [
        ([("a", P), ("b", S), ("c", X)], 0, True),
        ([("a", P), ("b", F)], 1, True),
        ([("a", E)], 2, True),
        ([("a", P)], 1, False),  # says all passed, exit code says otherwise (SWE-bench #620)
        ([], 1, False),
        ([("a", F)], 0, False),  # says failures, exit code says fine
        ([("a", F)], None, True),  # nothing to cross-check
    ],
)
def test_consistency_with_the_exit_code(pairs, exit_code, consistent):
    assert _report(*pairs, exit_code=exit_code).consistent is consistent


def test_counts_by_id_and_to_dict():
    report = _report(("a", P), ("b", F), ("c", F), exit_code=1)
    assert report.counts == {P: 1, F: 2, S: 0, E: 0, X: 0}
    assert report.by_id["b"].status is F
    dumped = report.to_dict()
    assert json.loads(json.dumps(dumped)) == dumped
    assert dumped["counts"]["FAILED"] == 2 and dumped["consistent"] is True


def test_parsed_report_is_frozen():
    report = _report(("a", P), exit_code=0)
    with pytest.raises(AttributeError):
        report.exit_code = 1  # type: ignore[misc]


def test_warnings_are_strings_with_codes():
    warning = ReportWarning("truncated", "cut at line 3")
    assert warning == "truncated: cut at line 3" and warning.code == "truncated"
    assert json.dumps([warning]) == '["truncated: cut at line 3"]'


def test_duplicates_keep_the_worst_status_in_first_seen_order():
    log = "PASSED a.py::t1\nPASSED a.py::t2\nERROR a.py::t1 - teardown\nFAILED a.py::t1 - x\n"
    report = reports.parse("pytest", log)
    assert list(statuses(report).items()) == [("a.py::t1", E), ("a.py::t2", P)]
    assert report.warning_codes == ("duplicate",)
    assert "PASSED, ERROR, FAILED" in report.warnings[0]


def test_many_duplicates_are_summarised():
    xml = (
        "<testsuite>"
        + "".join(f'<testcase classname="a" name="t{i}"/>' * 2 for i in range(30))
        + "</testsuite>"
    )
    report = reports.parse("junit", xml)
    assert len(report.results) == 30
    assert report.warning_codes == ("duplicate",) * 11
    assert report.warnings[-1].startswith("duplicate: 20 more")


def test_non_bytes_data_is_a_typed_error():
    with pytest.raises(ReportParseError):
        reports.parse("pytest", 42)  # type: ignore[arg-type]


class TestParseBest:
    def test_structured_reports_win_over_text_whatever_the_order(self):
        report = reports.parse_best(
            [("pytest", "PASSED tests/x.py::a\n"), ("junit", SUREFIRE)], exit_code=1
        )
        assert report.format == "junit:java"

    def test_a_structured_report_without_results_falls_back_to_text(self):
        report = reports.parse_best(
            [("junit", "<testsuite/>"), ("pytest", "FAILED tests/x.py::a - boom\n")], exit_code=1
        )
        assert report.format == "pytest" and statuses(report) == {"tests/x.py::a": F}
        assert report.warning_codes == ("fallback",)

    def test_an_unreadable_report_is_passed_over_with_a_note(self):
        report = reports.parse_best(
            [("junit", "<testsuite><testca"), ("exitcode", b"")], exit_code=0
        )
        assert report.format == "exitcode" and statuses(report) == {"exitcode": P}
        assert "junit" in report.warnings[0]

    def test_when_nothing_has_results_the_first_that_parsed_is_returned(self):
        report = reports.parse_best(
            [("junit", "garbage"), ("pytest", ""), ("plain", "")], exit_code=0
        )
        assert report.format == "pytest" and report.results == ()
        assert len(report.warnings) == 2  # junit failed; plain was empty too

    def test_nothing_parses(self):
        with pytest.raises(ReportParseError, match="no candidate report"):
            reports.parse_best([("junit", "garbage"), ("exitcode", "")], exit_code=None)

    def test_unknown_format_is_not_swallowed(self):
        with pytest.raises(UnknownFormatError):
            reports.parse_best([("nunit", "")])
