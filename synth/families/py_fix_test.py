"""Python: make a failing unit test pass by fixing the code under test."""

from __future__ import annotations

import hashlib
import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.families import _programs as prog
from synth.families._kit import write_step
from synth.spec import Blueprint


@family("py-fix-failing-test", category="build-debug", difficulty=Difficulty.MEDIUM,
        image="python", language="python")
class PyFixTest(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        p = prog.sample(rng)
        p["module"] = rng.choice(["mathutil", "numtools", "helpers"])
        return p

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        m = p["module"]
        return [
            f"The test suite in /app/proj fails (run `python3 -m pytest /app/proj`). Find the "
            f"bug in /app/proj/{m}.py and fix it so that the tests pass. Do not modify the tests.",
            f"`python3 -m pytest /app/proj` reports a failure. Fix the implementation in "
            f"{m}.py (not test_{m}.py) so the suite passes and the function behaves as its "
            f"docstring says.",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        m, n = p["module"], p["name"]
        tests = f"from {m} import {n}\n\n\n" + "".join(
            f"def test_case_{i}():\n    assert {n}({prog.args_text(a)}) == {w}\n\n\n"
            for i, (a, w) in enumerate(p["visible"]))
        tests = tests.rstrip() + "\n"
        digest = hashlib.sha256(tests.encode()).hexdigest()
        src = f"/app/proj/{m}.py"
        hidden = "; ".join(f"assert {n}({prog.args_text(a)}) == {w}, ({a!r}, {n}({prog.args_text(a)}))"
                           for a, w in p["hidden"] + p["visible"])
        check = f"""
import hashlib


def test_tests_untouched():
    assert hashlib.sha256(Path("/app/proj/test_{m}.py").read_bytes()).hexdigest() == {digest!r}


def test_suite_passes():
    code, out = sh("python3 -m pytest -q -p no:cacheprovider /app/proj")
    assert code == 0, out[-800:]


def test_hidden_cases():
    code, out = sh("python3 -c " + repr("import sys; sys.path.insert(0, '/app/proj'); from {m} import {n}; {hidden}"))
    assert code == 0, out[-800:]
"""
        return Blueprint(
            image="python",
            files={src: prog.python_src(p, buggy=True), f"/app/proj/test_{m}.py": tests},
            solution=(write_step(src, prog.python_src(p, buggy=False)),), check=check,
            mutants={
                "special-case-visible": (write_step(src, prog.python_src(p, buggy=True, hack=True)),),
                "edit-the-tests": (write_step(f"/app/proj/test_{m}.py", "def test_ok():\n    pass\n"),),
            })
