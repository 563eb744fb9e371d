"""JavaScript (Node): make a failing test script pass by fixing the module."""

from __future__ import annotations

import hashlib
import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.families import _programs as prog
from synth.families._kit import write_step
from synth.spec import Blueprint


@family("js-fix-failing-test", category="build-debug", difficulty=Difficulty.MEDIUM,
        image="node", language="javascript")
class JsFixTest(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        p = prog.sample(rng)
        p["module"] = rng.choice(["lib", "util", "numbers"])
        return p

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        m = p["module"]
        return [
            f"In /app/proj, `node test.js` fails. Fix the bug in {m}.js so that it passes; "
            f"test.js must stay unchanged.",
            f"The Node.js project /app/proj has a failing check (`node test.js`). Repair the "
            f"implementation in {m}.js, without editing test.js, so the checks succeed.",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        m, n = p["module"], p["name"]
        tests = (f"const assert = require('node:assert');\nconst {{ {n} }} = require('./{m}');\n\n"
                 + "".join(f"assert.strictEqual({n}({prog.args_text(a)}), {w});\n"
                           for a, w in p["visible"]) + "console.log('ok');\n")
        digest = hashlib.sha256(tests.encode()).hexdigest()
        src = f"/app/proj/{m}.js"
        hidden = " ".join(f"assert.strictEqual({n}({prog.args_text(a)}), {w});"
                          for a, w in p["hidden"] + p["visible"])
        js = f"const assert = require('node:assert'); const {{ {n} }} = require('/app/proj/{m}.js'); {hidden}"
        check = f"""
import hashlib


def test_tests_untouched():
    assert hashlib.sha256(Path("/app/proj/test.js").read_bytes()).hexdigest() == {digest!r}


def test_suite_passes():
    code, out = sh("node test.js", cwd="/app/proj")
    assert code == 0, out[-800:]


def test_hidden_cases():
    code, out = sh("node -e " + repr({js!r}))
    assert code == 0, out[-800:]
"""
        return Blueprint(
            image="node",
            files={src: prog.js_src(p, buggy=True), "/app/proj/test.js": tests},
            solution=(write_step(src, prog.js_src(p, buggy=False)),), check=check,
            mutants={
                "special-case-visible": (write_step(src, prog.js_src(p, buggy=True, hack=True)),),
                "edit-the-tests": (write_step("/app/proj/test.js", "console.log('ok');\n"),),
            })
