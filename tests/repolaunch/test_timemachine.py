"""The time machine's calendar: the interpreter a commit gets (its project's own
declarations, the day, the default ceiling) and the day its dependencies resolve as of."""

from __future__ import annotations

from pathlib import Path

import pytest

from repolaunch import timemachine as tm


def project(tmp_path: Path, *, classifiers: tuple[str, ...] = (), requires: str | None = None,
            tox: str | None = None, workflow: str | None = None) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    lines = [f'    "Programming Language :: Python :: {v}",' for v in classifiers]
    req = f"    python_requires={requires!r},\n" if requires else ""
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\nsetup(\n    name='p',\n" + req
        + "    classifiers=[\n" + "\n".join(lines) + "\n    ],\n)\n")
    if tox:
        (tmp_path / "tox.ini").write_text(f"[tox]\nenvlist = {tox}\n")
    if workflow:
        (tmp_path / ".github" / "workflows").mkdir(parents=True)
        (tmp_path / ".github" / "workflows" / "ci.yml").write_text(workflow)
    return tmp_path


def test_an_old_commit_gets_the_oldest_interpreter_here(tmp_path):
    repo = project(tmp_path, classifiers=("3.5", "3.6", "3.7"))
    c = tm.choose_python(repo, "2019-05-13T10:00:00Z")
    assert (c.version, c.suite) == ("3.9", "bullseye")
    assert c.declared == ("3.5", "3.6", "3.7") and "oldest" in c.why


def test_the_newest_declared_that_existed_on_the_day(tmp_path):
    repo = project(tmp_path, classifiers=("3.8", "3.9", "3.10", "3.11"))
    assert tm.choose_python(repo, "2023-04-14T00:00:00Z").version == "3.11"
    # the same declarations a month after 3.11 came out: its wheels were not there yet
    assert tm.choose_python(repo, "2022-11-20T00:00:00Z").version == "3.9"
    # declares up to 3.10: 3.11 is newer than the project allowed
    repo2 = project(tmp_path / "b", classifiers=("3.7", "3.8", "3.9", "3.10"))
    assert tm.choose_python(repo2, "2023-06-01T00:00:00Z").version == "3.9"


def test_no_newer_than_the_default_unless_required(tmp_path):
    repo = project(tmp_path, classifiers=("3.11", "3.12", "3.13"))
    assert tm.choose_python(repo, "2026-01-01T00:00:00Z").version == "3.11"
    required = project(tmp_path / "r", requires=">=3.12")
    c = tm.choose_python(required, "2026-01-01T00:00:00Z")
    assert (c.version, c.suite) == ("3.13", "trixie")
    assert tm.choose_python(required, "2026-01-01", default="3.13").version == "3.13"


def test_ci_matrix_and_tox_envlist_count_as_declarations(tmp_path):
    repo = project(tmp_path, tox="py36,py37,py38,py39",
                   workflow="jobs:\n  t:\n    strategy:\n      matrix:\n"
                            "        python-version: ['3.8', '3.9']\n")
    assert tm.ci_pythons(repo) == {"3.6", "3.7", "3.8", "3.9"}
    assert tm.choose_python(repo, "2022-03-01").version == "3.9"


@pytest.mark.parametrize("version,spec,ok", [
    ("3.9", ">=3.6", True), ("3.9", ">=3.10", False), ("3.11", "<3.10", False),
    ("3.9", "~=3.6", True), ("3.9", ">=3.7.2", True), ("3.11", ">=3.6,<3.11", False),
    ("3.9", "!=3.9.*", False), ("3.13", None, True), ("3.11", ">3.11", False),
    ("3.11", "<3.11.4", True),
])
def test_requires_python(version, spec, ok):
    assert tm.satisfies(version, spec) is ok


def test_resolution_never_predates_the_interpreters_wheels():
    assert tm.wheel_floor("3.9") == "2021-01-03T00:00:00Z"
    assert tm.resolve_date("2019-05-13T10:00:00Z", "3.9") == "2021-01-03T00:00:00Z"
    assert tm.resolve_date("2022-03-01T12:00:00+02:00", "3.9") == "2022-03-01T10:00:00Z"
    assert tm.resolve_date(None, "3.9") is None


def test_suites_in_order():
    assert tm.older_suite("bookworm") == "bullseye" and tm.older_suite("bullseye") is None
    assert tm.newer_suite("bookworm") == "trixie" and tm.newer_suite("trixie") is None
