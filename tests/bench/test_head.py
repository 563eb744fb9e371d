"""bench/head.py's own parts: the list read from the README's form, in an order that covers
every language first, and its table."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

_BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(_BENCH))  # head.py writes its section with replicate's helper
_SPEC = importlib.util.spec_from_file_location("head", _BENCH / "head.py")
head = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(head)  # type: ignore[union-attr]

README = """\
# Data

## Repositories for cold builds at HEAD (development list)
Python: a/one, b/two.py, c/three. C++: d/four,
e/five. Rust: f/six.

Fetch each as a public mirror, never g/seven.
"""


def test_the_list_is_read_from_its_section_round_robin_over_languages() -> None:
    assert head.read_list(README) == [
        ("python", "a/one"), ("cpp", "d/four"), ("rust", "f/six"),
        ("python", "b/two.py"), ("cpp", "e/five"), ("python", "c/three")]
    assert head.read_list("Go: x/y") == [("go", "x/y")]
    assert head.read_list("nothing here") == []


def _row(repo: str, listed: str, *, language: str | None, tests: int, passed: int,
         cause: str | None = None) -> dict:
    ran = tests
    return {"repo": repo, "listed": listed, "language": language, "built": language is not None,
            "tests": tests, "passed": passed,
            "pct": round(100 * passed / ran, 1) if ran else None,
            "meets": bool(ran) and passed / ran >= head.RULE, "cause": cause, "detail": "",
            "minutes": 1.5}


def test_the_table_says_which_meet_the_rule_per_language_and_why_not(tmp_path) -> None:
    rows = [_row("a/one", "python", language="python", tests=100, passed=85),
            _row("d/four", "cpp", language="c", tests=10, passed=8, cause="tests_failing"),
            _row("f/six", "rust", language=None, tests=0, passed=0, cause="env_build_failed")]
    text = head.markdown(rows, command="bench/head.py --list L", notes=["n1"])
    assert "| a/one | python | 100 | 85.0 | yes |" in text
    assert "| d/four | c (listed cpp) | 10 | 80.0 | no |" in text
    assert "| f/six | rust | 0 |  | no |" in text and "`env_build_failed`" in text
    assert "| **total** | 3 | 1/3 (33%) |" in text and "- n1" in text
    out = tmp_path / "r.md"
    sys.modules.setdefault("replicate", importlib.import_module("replicate"))
    from replicate import write_section

    write_section(out, head.SECTION, text)
    write_section(out, head.SECTION, text)  # in place of the earlier one
    assert out.read_text().count("## Cold builds at HEAD") == 1


def test_a_list_that_names_nothing_is_one_clear_error(tmp_path, capsys) -> None:
    lst = tmp_path / "l.md"
    lst.write_text("no repositories\n")
    assert head.main(["--list", str(lst), "--repos", str(tmp_path), "--no-write"]) == 2
    assert "names no repository" in capsys.readouterr().err
