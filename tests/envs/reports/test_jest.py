"""Jest --json and the Vitest JSON reporter."""

from __future__ import annotations

import json

import pytest

from envs import reports
from envs.reports import ReportParseError

from ._helpers import E, F, P, S, statuses


def _assertion(ancestors, title, status, *, duration=2, failures=()):
    return {
        "ancestorTitles": list(ancestors),
        "duration": duration,
        "failureDetails": [{}] * len(failures),
        "failureMessages": list(failures),
        "fullName": " ".join([*ancestors, title]),
        "invocations": 1,
        "location": None,
        "numPassingAsserts": 0,
        "retryReasons": [],
        "status": status,
        "title": title,
    }


JEST = json.dumps(
    {
        "numFailedTestSuites": 2,
        "numFailedTests": 1,
        "numPassedTestSuites": 1,
        "numPassedTests": 3,
        "numPendingTestSuites": 0,
        "numPendingTests": 2,
        "numTodoTests": 1,
        "numTotalTestSuites": 3,
        "numTotalTests": 7,
        "success": False,
        "startTime": 1714564800000,
        "testResults": [
            {
                "assertionResults": [
                    _assertion(["math", "add"], "adds numbers", "passed"),
                    _assertion(["math", "add"], "adds [1, 2] → 3", "passed"),
                    _assertion(
                        ["math"],
                        "divides by zero",
                        "failed",
                        failures=[
                            "Error: \x1b[2mexpect(\x1b[22mreceived\x1b[2m).toBe(\x1b[22mexpected\x1b[2m)\nExpected: 0\nReceived: Infinity"
                        ],
                    ),
                    _assertion(["math"], "later", "pending", duration=None),
                    _assertion([], "top-level test with ünïcode", "passed"),
                    _assertion(["math"], "write docs", "todo", duration=None),
                ],
                "endTime": 1714564801000,
                "message": "",
                "name": "/testbed/src/__tests__/math.test.js",
                "startTime": 1714564800100,
                "status": "failed",
                "summary": "",
            },
            {
                "assertionResults": [_assertion(["skipped suite"], "never runs", "skipped")],
                "endTime": 1714564801000,
                "message": "",
                "name": "/testbed/src/__tests__/skipped.test.js",
                "startTime": 1714564800100,
                "status": "passed",
                "summary": "",
            },
            {
                "assertionResults": [],
                "endTime": 1714564801000,
                "message": "\x1b[1m\x1b[31m  \x1b[1m● \x1b[22m\x1b[1mTest suite failed to run\n\n    Cannot find module './missing' from 'src/__tests__/broken.test.js'",
                "name": "/testbed/src/__tests__/broken.test.js",
                "startTime": 1714564800100,
                "status": "failed",
                "summary": "",
            },
        ],
        "wasInterrupted": False,
    }
)

VITEST = json.dumps(
    {
        "numTotalTestSuites": 2,
        "numPassedTests": 1,
        "numFailedTests": 1,
        "success": False,
        "testResults": [
            {
                "assertionResults": [
                    {
                        "ancestorTitles": ["compiler", "v-if"],
                        "fullName": "compiler v-if handles else",
                        "status": "passed",
                        "title": "handles else",
                        "duration": 1.5,
                        "failureMessages": [],
                        "meta": {},
                    },
                    {
                        "ancestorTitles": ["compiler", "v-if"],
                        "fullName": "compiler v-if keeps key",
                        "status": "failed",
                        "title": "keeps key",
                        "duration": 3,
                        "failureMessages": ["AssertionError: expected 'a' to be 'b'"],
                        "meta": {},
                    },
                ],
                "startTime": 1714564800000,
                "endTime": 1714564800100,
                "status": "failed",
                "message": "",
                "name": "/testbed/packages/compiler/__tests__/vIf.spec.ts",
            }
        ],
    },
    indent=2,
)

SAMPLES = [("jest-json", JEST), ("vitest-json", VITEST)]


def test_jest_ids_are_ancestor_titles_and_title():
    report = reports.parse("jest-json", JEST, exit_code=1)
    assert statuses(report) == {
        "math > add > adds numbers": P,
        "math > add > adds [1, 2] → 3": P,
        "math > divides by zero": F,
        "math > later": S,
        "top-level test with ünïcode": P,
        "math > write docs": S,
        "skipped suite > never runs": S,
        "/testbed/src/__tests__/broken.test.js": E,  # the file failed to run
    }
    message = report.by_id["math > divides by zero"].message
    assert "\x1b" not in message and "Received: Infinity" in message
    assert report.by_id["math > add > adds numbers"].duration == pytest.approx(0.002)
    assert report.warning_codes == ("suite-failed",)
    assert "Cannot find module" in report.by_id["/testbed/src/__tests__/broken.test.js"].message


def test_vitest_json_has_the_same_shape():
    report = reports.parse("vitest-json", VITEST, exit_code=1)
    assert statuses(report) == {
        "compiler > v-if > handles else": P,
        "compiler > v-if > keeps key": F,
    }
    assert report.warnings == ()  # the failed file has a failing test: no extra ERROR


def test_console_output_before_the_json_is_tolerated():
    noisy = (
        "yarn run v1.22.19\n$ jest --json\nconsole.log src/x.js:3\n  hello {\n"
        + JEST
        + "\nDone in 3.2s.\n"
    )
    assert len(reports.parse("jest-json", noisy).results) == 8


def test_truncated_json_is_salvaged_assertion_by_assertion():
    cut = JEST.index('"title": "top-level test')
    report = reports.parse("jest-json", JEST[:cut])
    assert statuses(report) == {
        "math > add > adds numbers": P,
        "math > add > adds [1, 2] → 3": P,
        "math > divides by zero": F,
        "math > later": S,
    }
    assert report.warning_codes == ("truncated",)


def test_other_json_is_not_a_jest_report():
    with pytest.raises(ReportParseError, match="testResults"):
        reports.parse("jest-json", '{"stats": {}}')
    with pytest.raises(ReportParseError):
        reports.parse("jest-json", "FAIL src/x.test.js")


def test_unknown_status_is_left_out_with_a_warning():
    doc = {
        "testResults": [{"assertionResults": [_assertion([], "t", "exploded")], "status": "passed"}]
    }
    report = reports.parse("jest-json", json.dumps(doc))
    assert report.results == ()
    assert report.warning_codes == ("unknown-status",)


def test_vitest_1_empty_root_suite_title_is_not_part_of_the_id():
    # Vitest 1.6 (golden fixture ts-vitest-json) starts ancestorTitles with the file's
    # unnamed root suite: ["", "calc"]. The id must not start with " > ".
    doc = json.dumps(
        {
            "numTotalTests": 2,
            "testResults": [
                {
                    "assertionResults": [
                        _assertion(["", "calc"], "adds numbers", "passed"),
                        _assertion([""], "top level test", "failed", failures=["boom"]),
                    ],
                    "status": "failed",
                    "message": "",
                    "name": "/testbed/tests/calc.test.ts",
                }
            ],
        }
    )
    report = reports.parse("vitest-json", doc, exit_code=1)
    assert statuses(report) == {"calc > adds numbers": P, "top level test": F}


@pytest.mark.parametrize(
    "fmt, message",
    [
        ("vitest-json", "No test suite found in file /testbed/src/cases.spec.ts"),
        (
            "jest-json",
            "\x1b[1m\x1b[31m  \x1b[1m● \x1b[22m\x1b[1mTest suite failed to run\n\n"
            "    Your test suite must contain at least one test.",
        ),
    ],
)
def test_a_file_with_no_tests_is_a_warning_not_an_error(fmt, message):
    # A data module matching the runner's file pattern (path-to-regexp's src/cases.spec.ts)
    # is not a test that errored: it is left out, with a warning.
    doc = {
        "testResults": [
            {
                "assertionResults": [_assertion(["parse"], "works", "passed")],
                "status": "passed",
                "message": "",
                "name": "/testbed/src/index.spec.ts",
            },
            {
                "assertionResults": [],
                "status": "failed",
                "message": message,
                "name": "/testbed/src/cases.spec.ts",
            },
        ]
    }
    report = reports.parse(fmt, json.dumps(doc), exit_code=1)
    assert statuses(report) == {"parse > works": P}
    assert report.warning_codes == ("empty-file",)


def test_a_file_that_fails_to_run_is_still_an_error_even_if_it_mentions_no_tests():
    # Only a file with no assertion results and the runner's own "no tests" message is empty.
    doc = {
        "testResults": [
            {
                "assertionResults": [],
                "status": "failed",
                "message": "SyntaxError: Unexpected token",
                "name": "/testbed/src/broken.spec.ts",
            }
        ]
    }
    report = reports.parse("vitest-json", json.dumps(doc), exit_code=1)
    assert statuses(report) == {"/testbed/src/broken.spec.ts": E}
