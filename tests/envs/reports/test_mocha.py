"""mocha --reporter json."""

from __future__ import annotations

import json

import pytest

from envs import reports
from envs.reports import ReportParseError

from ._helpers import E, F, P, S, statuses


def _test(title, full, *, err=None, duration=1, path=None):
    t = {
        "title": title,
        "fullTitle": full,
        "file": "/app/test/array.spec.js",
        "duration": duration,
        "currentRetry": 0,
        "speed": "fast",
        "err": err or {},
    }
    if path is not None:
        t["titlePath"] = path
    return t


PASS_1 = _test("returns -1 when missing", "Array #indexOf() returns -1 when missing")
PASS_2 = _test("handles ünïcode [é]", "Array #indexOf() handles ünïcode [é]")
FAIL_1 = _test(
    "finds the index",
    "Array #indexOf() finds the index",
    err={
        "message": "expected -1 to equal 0",
        "stack": "AssertionError: expected -1 to equal 0\n    at Context.<anonymous>",
        "showDiff": True,
        "actual": "-1",
        "expected": "0",
    },
)
HOOK = _test(
    '"before all" hook for "connects"',
    'Database "before all" hook for "connects"',
    err={"message": "ECONNREFUSED"},
)
PENDING = _test("sorts", "Array #sort() sorts", duration=None)

MOCHA = json.dumps(
    {
        "stats": {
            "suites": 3,
            "tests": 4,
            "passes": 2,
            "pending": 1,
            "failures": 2,
            "start": "2024-05-01T12:00:00.000Z",
            "end": "2024-05-01T12:00:00.050Z",
            "duration": 50,
        },
        "tests": [PASS_1, PASS_2, FAIL_1, PENDING],
        "pending": [PENDING],
        "failures": [FAIL_1, HOOK],
        "passes": [PASS_1, PASS_2],
    },
    indent=2,
)

WITH_TITLE_PATH = json.dumps(
    {
        "stats": {"tests": 1},
        "passes": [_test("works", "a b works", path=["a b", "works"])],
        "failures": [],
        "pending": [],
    }
)

SAMPLES = [("mocha-json", MOCHA), ("mocha-json", WITH_TITLE_PATH)]


def test_mocha_ids_are_full_titles():
    report = reports.parse("mocha-json", MOCHA, exit_code=2)
    assert statuses(report) == {
        "Array #indexOf() returns -1 when missing": P,
        "Array #indexOf() handles ünïcode [é]": P,
        "Array #indexOf() finds the index": F,
        'Database "before all" hook for "connects"': E,
        "Array #sort() sorts": S,
    }
    assert report.by_id["Array #indexOf() finds the index"].message == "expected -1 to equal 0"
    assert report.by_id["Array #indexOf() returns -1 when missing"].duration == pytest.approx(0.001)
    assert report.consistent


def test_title_path_is_preferred_when_present():
    assert statuses(reports.parse("mocha-json", WITH_TITLE_PATH)) == {"a b > works": P}
    assert statuses(reports.parse("mocha-json:fulltitle", WITH_TITLE_PATH)) == {"a b works": P}


def test_only_a_tests_array():
    doc = {"tests": [PASS_1, FAIL_1, {**PENDING, "pending": True}]}
    assert statuses(reports.parse("mocha-json", json.dumps(doc))) == {
        "Array #indexOf() returns -1 when missing": P,
        "Array #indexOf() finds the index": F,
        "Array #sort() sorts": S,
    }


def test_not_mocha():
    with pytest.raises(ReportParseError, match="mocha"):
        reports.parse("mocha-json", '{"testResults": []}')
