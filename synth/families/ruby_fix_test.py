"""Ruby: make a failing minitest pass by fixing the library."""

from __future__ import annotations

import hashlib
import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.families import _programs as prog
from synth.families._kit import write_step
from synth.spec import Blueprint


@family("ruby-fix-failing-test", category="build-debug", difficulty=Difficulty.MEDIUM,
        image="ruby", language="ruby")
class RubyFixTest(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        p = prog.sample(rng)
        p["module"] = rng.choice(["tools", "numeric_helpers", "calc"])
        return p

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        m = p["module"]
        return [
            f"The minitest suite of /app/proj fails: `ruby -Ilib test/test_{m}.rb` (run in "
            f"/app/proj). Fix lib/{m}.rb so the tests pass; do not change the test file.",
            f"Repair the Ruby library /app/proj/lib/{m}.rb: its test, test/test_{m}.rb "
            f"(`ruby -Ilib test/test_{m}.rb` from /app/proj), must pass without being edited.",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        m, n = p["module"], p["name"]
        tests = ("require 'minitest/autorun'\nrequire '" + m + "'\n\nclass TestTools < Minitest::Test\n"
                 + "".join(f"  def test_case_{i}\n    assert_equal {w}, Tools.{n}({prog.args_text(a)})\n  end\n"
                           for i, (a, w) in enumerate(p["visible"])) + "end\n")
        digest = hashlib.sha256(tests.encode()).hexdigest()
        src = f"/app/proj/lib/{m}.rb"
        hidden = "; ".join(f"raise 'case {a}' unless Tools.{n}({prog.args_text(a)}) == {w}"
                           for a, w in p["hidden"] + p["visible"])
        rb = f"require '{src}'; {hidden}"
        check = f"""
import hashlib


def test_tests_untouched():
    assert hashlib.sha256(Path("/app/proj/test/test_{m}.rb").read_bytes()).hexdigest() == {digest!r}


def test_suite_passes():
    code, out = sh("ruby -Ilib test/test_{m}.rb", cwd="/app/proj")
    assert code == 0 and "0 failures, 0 errors" in out, out[-800:]


def test_hidden_cases():
    code, out = sh("ruby -e " + repr({rb!r}))
    assert code == 0, out[-800:]
"""
        return Blueprint(
            image="ruby",
            files={src: prog.ruby_src(p, buggy=True), f"/app/proj/test/test_{m}.rb": tests},
            solution=(write_step(src, prog.ruby_src(p, buggy=False)),), check=check,
            mutants={
                "special-case-visible": (write_step(src, prog.ruby_src(p, buggy=True, hack=True)),),
                "edit-the-tests": (write_step(f"/app/proj/test/test_{m}.rb",
                                              "require 'minitest/autorun'\n"),),
            })
