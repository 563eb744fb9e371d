"""Test ids in a form two machines' lists can be compared in."""

from __future__ import annotations

from envs.reports import comparable_id, swebench_id


def test_pytest_ids_are_cut_as_swebench_cuts_them_and_paths_shortened() -> None:
    assert comparable_id("tests/t.py::test_x[a b]", "pytest") == "tests/t.py::test_x[a"
    assert comparable_id("t.py::test_f[/tmp/x/data.csv]", "pytest") == "t.py::test_f[/data.csv]"


def test_a_javascript_ids_leading_test_file_is_left_out() -> None:
    """SWE-bench's Vitest parser writes the file first; ours writes the suites alone."""
    theirs = "packages/core/__tests__/renderList.spec.ts > renderList > renders items"
    assert comparable_id(theirs, "vitest-json") == "renderList > renders items"
    assert comparable_id("renderList > renders items", "vitest-json") == \
        "renderList > renders items"
    # a suite name that merely contains a dot is not a file
    assert comparable_id("a.b > c", "vitest-json") == "a.b > c"
    # other formats keep ids whole
    assert comparable_id(theirs, "junit") == theirs


def test_a_jest_id_in_swebench_form_is_its_title() -> None:
    """SWE-bench's Jest parser reads the verbose reporter's lines: the title, no describes."""
    assert swebench_id("scope > rename > .shorthand after renaming", "jest-json") == \
        ".shorthand after renaming"
    assert comparable_id("es2015/yield/yield in params", "jest-json") == "es2015/yield/yield in params"
    # Vitest's and mocha's parsers keep the describe path
    assert swebench_id("a > b", "vitest-json") == "a > b"
    assert swebench_id("a > b", "mocha-json") == "a > b"
