"""go test -json events and go test -v text."""

from __future__ import annotations

import json

import pytest

from envs import reports
from envs.reports import ReportParseError

from ._helpers import E, F, P, S, statuses


def _events(*events: dict) -> str:
    return "\n".join(json.dumps(e) for e in events) + "\n"


PKG = "github.com/gin-gonic/gin"
T0 = "2024-05-01T12:00:00.000000Z"

JSON_STREAM = _events(
    {"Time": T0, "Action": "start", "Package": PKG},
    {"Time": T0, "Action": "run", "Package": PKG, "Test": "TestColor"},
    {
        "Time": T0,
        "Action": "output",
        "Package": PKG,
        "Test": "TestColor",
        "Output": "=== RUN   TestColor\n",
    },
    {
        "Time": T0,
        "Action": "output",
        "Package": PKG,
        "Test": "TestColor",
        "Output": "--- PASS: TestColor (0.00s)\n",
    },
    {"Time": T0, "Action": "pass", "Package": PKG, "Test": "TestColor", "Elapsed": 0.001},
    {"Time": T0, "Action": "run", "Package": PKG, "Test": "TestRouter"},
    {"Time": T0, "Action": "run", "Package": PKG, "Test": "TestRouter/static_route"},
    {"Time": T0, "Action": "run", "Package": PKG, "Test": "TestRouter/param_route_ü"},
    {
        "Time": T0,
        "Action": "output",
        "Package": PKG,
        "Test": "TestRouter/param_route_ü",
        "Output": "    router_test.go:42: got 404, want 200\n",
    },
    {"Time": T0, "Action": "pass", "Package": PKG, "Test": "TestRouter/static_route", "Elapsed": 0},
    {
        "Time": T0,
        "Action": "fail",
        "Package": PKG,
        "Test": "TestRouter/param_route_ü",
        "Elapsed": 0.01,
    },
    {"Time": T0, "Action": "fail", "Package": PKG, "Test": "TestRouter", "Elapsed": 0.02},
    {"Time": T0, "Action": "run", "Package": PKG, "Test": "TestWindowsOnly"},
    {"Time": T0, "Action": "skip", "Package": PKG, "Test": "TestWindowsOnly", "Elapsed": 0},
    {"Time": T0, "Action": "run", "Package": PKG, "Test": "FuzzParse/seed#0"},
    {"Time": T0, "Action": "pass", "Package": PKG, "Test": "FuzzParse/seed#0", "Elapsed": 0},
    {"Time": T0, "Action": "output", "Package": PKG, "Output": "FAIL\n"},
    {"Time": T0, "Action": "fail", "Package": PKG, "Elapsed": 0.05},
    {"Time": T0, "Action": "start", "Package": PKG + "/render"},
    {
        "Time": T0,
        "Action": "output",
        "Package": PKG + "/render",
        "Output": "?   \tgithub.com/gin-gonic/gin/render\t[no test files]\n",
    },
    {"Time": T0, "Action": "skip", "Package": PKG + "/render", "Elapsed": 0},
)

BUILD_FAILED = (
    "# github.com/gin-gonic/gin/binding [github.com/gin-gonic/gin/binding.test]\n"
    "binding/form.go:12:2: undefined: foo\n"
    + _events(
        {"Time": T0, "Action": "start", "Package": PKG + "/binding"},
        {
            "Time": T0,
            "Action": "output",
            "Package": PKG + "/binding",
            "Output": "FAIL\tgithub.com/gin-gonic/gin/binding [build failed]\n",
        },
        {"Time": T0, "Action": "fail", "Package": PKG + "/binding", "Elapsed": 0},
        {"Time": T0, "Action": "run", "Package": PKG, "Test": "TestOK"},
        {"Time": T0, "Action": "pass", "Package": PKG, "Test": "TestOK", "Elapsed": 0},
        {"Time": T0, "Action": "pass", "Package": PKG, "Elapsed": 0.01},
    )
)

# Go 1.24+: build output as its own events, and FailedBuild on the package's fail
BUILD_FAILED_124 = _events(
    {
        "ImportPath": PKG + "/binding [github.com/gin-gonic/gin/binding.test]",
        "Action": "build-output",
        "Output": "binding/form.go:12:2: undefined: foo\n",
    },
    {
        "ImportPath": PKG + "/binding [github.com/gin-gonic/gin/binding.test]",
        "Action": "build-fail",
    },
    {"Time": T0, "Action": "start", "Package": PKG + "/binding"},
    {
        "Time": T0,
        "Action": "fail",
        "Package": PKG + "/binding",
        "Elapsed": 0,
        "FailedBuild": PKG + "/binding [github.com/gin-gonic/gin/binding.test]",
    },
)

PANIC = _events(
    {"Time": T0, "Action": "run", "Package": PKG, "Test": "TestFine"},
    {"Time": T0, "Action": "pass", "Package": PKG, "Test": "TestFine", "Elapsed": 0},
    {"Time": T0, "Action": "run", "Package": PKG, "Test": "TestHangs"},
    {
        "Time": T0,
        "Action": "output",
        "Package": PKG,
        "Test": "TestHangs",
        "Output": "panic: test timed out after 10m0s\n",
    },
    {"Time": T0, "Action": "fail", "Package": PKG, "Elapsed": 600.1},
)

VERBOSE_TEXT = """\
=== RUN   TestColor
--- PASS: TestColor (0.00s)
=== RUN   TestRouter
=== RUN   TestRouter/static_route
=== RUN   TestRouter/param_route
    router_test.go:42: got 404, want 200
--- FAIL: TestRouter (0.02s)
    --- PASS: TestRouter/static_route (0.00s)
    --- FAIL: TestRouter/param_route (0.01s)
=== RUN   TestWindowsOnly
    main_test.go:9: windows only
--- SKIP: TestWindowsOnly (0.00s)
FAIL
FAIL\tgithub.com/gin-gonic/gin\t0.051s
=== RUN   TestHangs
panic: test timed out after 10m0s
FAIL\tgithub.com/gin-gonic/gin/internal\t600.010s
FAIL\tgithub.com/gin-gonic/gin/binding [build failed]
ok  \tgithub.com/gin-gonic/gin/render\t0.010s
FAIL
"""

SAMPLES = [
    ("gotest-json", JSON_STREAM),
    ("gotest-json", BUILD_FAILED),
    ("gotest-json", BUILD_FAILED_124),
    ("gotest-json", PANIC),
    ("gotest", VERBOSE_TEXT),
]


def test_json_stream_ids_are_test_and_subtest_names():
    report = reports.parse("gotest-json", JSON_STREAM, exit_code=1)
    assert statuses(report) == {
        "TestColor": P,
        "TestRouter/static_route": P,
        "TestRouter/param_route_ü": F,
        "TestRouter": F,
        "TestWindowsOnly": S,
        "FuzzParse/seed#0": P,
    }
    assert "got 404" in report.by_id["TestRouter/param_route_ü"].message
    assert report.by_id["TestColor"].duration == pytest.approx(0.001)
    assert report.consistent
    assert report.warnings == ()


def test_build_failure_is_an_error_for_the_package_and_a_warning():
    report = reports.parse("gotest-json", BUILD_FAILED, exit_code=2)
    assert statuses(report) == {PKG + "/binding": E, "TestOK": P}
    assert report.warning_codes == ("package-failed",)
    assert "build failed" in report.warnings[0]
    assert report.consistent  # the ERROR agrees with the non-zero exit code


def test_go_124_build_events():
    report = reports.parse("gotest-json", BUILD_FAILED_124, exit_code=1)
    assert statuses(report) == {PKG + "/binding": E}
    assert "build failed" in report.warnings[0]


def test_a_test_running_when_the_package_died_failed():
    report = reports.parse("gotest-json", PANIC, exit_code=1)
    assert statuses(report) == {"TestFine": P, "TestHangs": F}
    assert report.warnings == ()  # the package has a failing test: no package ERROR


def test_truncated_stream_keeps_finished_tests():
    cut = (
        JSON_STREAM.index(
            '"Action": "fail", "Package": "github.com/gin-gonic/gin", "Test": "TestRouter"'
        )
        + 30
    )
    report = reports.parse("gotest-json", JSON_STREAM[:cut])
    assert statuses(report) == {
        "TestColor": P,
        "TestRouter/static_route": P,
        "TestRouter/param_route_ü": F,
    }
    assert "truncated" in report.warning_codes


def test_text_without_events_is_not_a_json_stream():
    with pytest.raises(ReportParseError, match="no go test -json events"):
        reports.parse("gotest-json", VERBOSE_TEXT)


def test_verbose_text():
    report = reports.parse("gotest", VERBOSE_TEXT, exit_code=1)
    assert statuses(report) == {
        "TestColor": P,
        "TestRouter": F,
        "TestRouter/static_route": P,
        "TestRouter/param_route": F,
        "TestWindowsOnly": S,
        "TestHangs": F,  # started, never finished, package failed
        "github.com/gin-gonic/gin/binding": E,
    }
    assert report.warning_codes == ("package-failed",)


# Go before 1.24 (1.19 here, from the golden fixture go-test-json): a package that does
# not build is no event at all, only a bare text line among the events on stdout.
BARE_BUILD_FAILURE = "FAIL\texample.com/golden/broken [build failed]\n" + _events(
    {"Time": T0, "Action": "run", "Package": PKG, "Test": "TestOK"},
    {"Time": T0, "Action": "pass", "Package": PKG, "Test": "TestOK", "Elapsed": 0},
    {"Time": T0, "Action": "pass", "Package": PKG, "Elapsed": 0.01},
)
SAMPLES.append(("gotest-json", BARE_BUILD_FAILURE))


def test_go_119_bare_build_failure_line_is_an_error_for_the_package():
    report = reports.parse("gotest-json", BARE_BUILD_FAILURE, exit_code=2)
    assert statuses(report) == {"example.com/golden/broken": E, "TestOK": P}
    assert report.warning_codes == ("package-failed",)
    assert report.consistent


def test_go_119_stream_where_nothing_builds_is_still_a_report():
    stream = (
        "FAIL\texample.com/golden/a [build failed]\nFAIL\texample.com/golden/b [setup failed]\n"
    )
    report = reports.parse("gotest-json", stream, exit_code=2)
    assert statuses(report) == {"example.com/golden/a": E, "example.com/golden/b": E}
    assert report.consistent
