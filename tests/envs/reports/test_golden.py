"""Parsers against real framework output: golden cases in ``golden/`` (see its README).

The cases arrive separately (produced by running each framework in Docker). Each found
case is one parametrized test; the layout check fails when a case is incomplete, and is
itself tested on a synthetic tree so that it is known to work before real cases exist.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from envs import models, reports

GOLDEN = Path(__file__).parent / "golden"
_IGNORED = {"meta.json", "expected.json", "command.txt", "source.txt"}


@dataclass(frozen=True)
class Case:
    path: Path
    report: Path
    meta: dict
    expected: dict[str, str]


def find_case_dirs(root: Path) -> list[Path]:
    """Directories strictly below ``root`` that hold at least one file."""
    if not root.is_dir():
        return []
    return sorted(
        d
        for d in root.rglob("*")
        if d.is_dir() and not d.name.startswith(".") and any(_counts(f) for f in d.iterdir())
    )


def _counts(f: Path) -> bool:
    return f.is_file() and not f.name.startswith(".") and not f.name.upper().startswith("README")


def load_case(path: Path) -> Case:
    """The case in ``path``; ValueError saying what is wrong with it otherwise."""
    meta_file, expected_file = path / "meta.json", path / "expected.json"
    if not expected_file.is_file():
        raise ValueError(f"{path}: no expected.json")
    if not meta_file.is_file():
        raise ValueError(f"{path}: no meta.json")
    try:
        meta = json.loads(meta_file.read_text())
        expected_list = json.loads(expected_file.read_text())
    except ValueError as exc:
        raise ValueError(f"{path}: invalid JSON ({exc})") from exc
    if not isinstance(meta, dict) or not isinstance(meta.get("format"), str):
        raise ValueError(f"{path}: meta.json needs a 'format' string")
    reports.format_info(meta["format"])  # an unknown format is a layout error too
    if (
        "exit_code" in meta
        and meta["exit_code"] is not None
        and not isinstance(meta["exit_code"], int)
    ):
        raise ValueError(f"{path}: meta.json 'exit_code' must be an integer or null")
    if not isinstance(expected_list, list):
        raise ValueError(f"{path}: expected.json must be a list")
    statuses = {s.value for s in models.TestStatus}
    expected: dict[str, str] = {}
    for item in expected_list:
        if not (
            isinstance(item, dict)
            and isinstance(item.get("test_id"), str)
            and item.get("status") in statuses
        ):
            raise ValueError(f"{path}: bad expected.json entry {item!r}")
        if item["test_id"] in expected:
            raise ValueError(f"{path}: {item['test_id']!r} is listed twice in expected.json")
        expected[item["test_id"]] = item["status"]
    if "report" in meta:
        report = path / str(meta["report"])
        if not report.is_file():
            raise ValueError(f"{path}: meta.json names report {meta['report']!r}, which is missing")
    else:
        candidates = [f for f in path.iterdir() if _counts(f) and f.name not in _IGNORED]
        if len(candidates) != 1:
            raise ValueError(
                f"{path}: expected exactly one report file, found {sorted(c.name for c in candidates)}"
            )
        report = candidates[0]
    return Case(path, report, meta, expected)


def layout_problems(root: Path) -> list[str]:
    problems = []
    for path in find_case_dirs(root):
        try:
            load_case(path)
        except (ValueError, reports.ReportParseError) as exc:
            problems.append(str(exc))
    return problems


CASE_DIRS = find_case_dirs(GOLDEN)


def test_golden_layout_is_valid():
    assert layout_problems(GOLDEN) == []


@pytest.mark.parametrize("path", CASE_DIRS, ids=[str(p.relative_to(GOLDEN)) for p in CASE_DIRS])
def test_golden_case(path):
    case = load_case(path)
    report = reports.parse(
        case.meta["format"],
        case.report.read_bytes(),
        exit_code=case.meta.get("exit_code"),
        options=case.meta.get("options"),
    )
    got = {r.test_id: r.status.value for r in report.results}
    missing = {k: v for k, v in case.expected.items() if k not in got}
    extra = {k: v for k, v in got.items() if k not in case.expected}
    wrong = {k: (got[k], v) for k, v in case.expected.items() if k in got and got[k] != v}
    assert (missing, extra, wrong) == ({}, {}, {}), "missing / unexpected / (got, expected)"
    if "consistent" in case.meta:
        assert report.consistent is case.meta["consistent"]


@pytest.mark.parametrize("path", CASE_DIRS, ids=[str(p.relative_to(GOLDEN)) for p in CASE_DIRS])
def test_golden_report_cut_anywhere(path):
    """A real report cut short (capped output, a killed runner) never breaks a parser,
    and the formats that keep only complete entries never invent a test."""
    from .test_properties import NO_INVENTED_IDS, _offsets, check

    case = load_case(path)
    fmt = case.meta["format"]
    data = case.report.read_bytes()
    full = check(fmt, data, case.meta.get("exit_code"))
    assert full is not None
    for cut in _offsets(len(data)):
        report = check(fmt, data[:cut], case.meta.get("exit_code"))
        if report is not None and reports.registry.split_format(fmt)[0] in NO_INVENTED_IDS:
            invented = set(report.by_id) - set(full.by_id)
            assert not invented, f"cut at {cut} invented {invented}"


JUNIT_CASES = [
    p for p in CASE_DIRS if json.loads((p / "meta.json").read_text())["format"].startswith("junit:")
]


@pytest.mark.parametrize("path", JUNIT_CASES, ids=[str(p.relative_to(GOLDEN)) for p in JUNIT_CASES])
def test_golden_junit_flavor_is_detected(path):
    """Plain ``junit`` reads each real tool's report as its declared flavor would."""
    case = load_case(path)
    declared = reports.parse(case.meta["format"], case.report.read_bytes())
    detected = reports.parse("junit", case.report.read_bytes())
    assert detected.format == declared.format
    assert detected.results == declared.results


def test_golden_fixtures_match_the_generator():
    """Every case data/golden/ defines is committed, with the expectations it plants."""
    golden = pytest.importorskip("data.golden")
    committed = {str(p.relative_to(GOLDEN)) for p in CASE_DIRS}
    defined = {c.name for c in golden.CASES}
    assert defined <= committed, f"not generated yet: {sorted(defined - committed)}"
    for c in golden.CASES:
        d = GOLDEN / c.name
        assert json.loads((d / "expected.json").read_text()) == c.expected_list, c.name
        meta = json.loads((d / "meta.json").read_text())
        assert (meta["format"], meta["report"], meta["command"]) == (c.format, c.report, c.command)


class TestLayoutChecker:
    """The checker itself, on synthetic trees: it must accept good cases and name bad ones."""

    def _case(self, root: Path, name: str, *, meta=True, expected=True, report=True) -> Path:
        d = root / name
        d.mkdir(parents=True)
        if meta:
            (d / "meta.json").write_text(json.dumps({"format": "pytest", "exit_code": 1}))
        if expected:
            (d / "expected.json").write_text(
                json.dumps([{"test_id": "a.py::t", "status": "FAILED"}])
            )
        if report:
            (d / "output.txt").write_text("FAILED a.py::t - boom\n")
        return d

    def test_a_good_tree(self, tmp_path):
        self._case(tmp_path, "pytest/basic")
        self._case(tmp_path, "pytest2")
        (tmp_path / "README.md").write_text("about")
        assert [p.relative_to(tmp_path).as_posix() for p in find_case_dirs(tmp_path)] == [
            "pytest/basic",
            "pytest2",
        ]
        assert layout_problems(tmp_path) == []
        test_golden_case(tmp_path / "pytest2")  # and the case passes

    @pytest.mark.parametrize(
        ("kwargs", "problem"),
        [
            ({"expected": False}, "no expected.json"),
            ({"meta": False}, "no meta.json"),
            ({"report": False}, "exactly one report file"),
        ],
    )
    def test_an_incomplete_case_is_a_problem(self, tmp_path, kwargs, problem):
        self._case(tmp_path, "fw", **kwargs)
        problems = layout_problems(tmp_path)
        assert len(problems) == 1 and problem in problems[0]

    def test_bad_contents_are_problems(self, tmp_path):
        d = self._case(tmp_path, "fw")
        (d / "expected.json").write_text(json.dumps([{"test_id": "x", "status": "GREEN"}]))
        assert "bad expected.json entry" in layout_problems(tmp_path)[0]
        (d / "expected.json").write_text("[]")
        (d / "meta.json").write_text(json.dumps({"format": "nunit"}))
        assert "unknown report format" in layout_problems(tmp_path)[0]

    def test_a_wrong_expectation_fails_the_case(self, tmp_path):
        d = self._case(tmp_path, "fw")
        (d / "expected.json").write_text(json.dumps([{"test_id": "a.py::t", "status": "PASSED"}]))
        with pytest.raises(AssertionError):
            test_golden_case(d)

    def test_no_golden_dir_means_no_cases(self, tmp_path):
        assert find_case_dirs(tmp_path / "absent") == []
