"""Write a reusable renaming script (graded on hidden inputs)."""

from __future__ import annotations

import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.families._kit import write_step
from synth.spec import Blueprint

SCRIPT = """#!/bin/bash
set -e
cd "$1"
for f in *; do
  [ -f "$f" ] || continue
  new=$(printf '%s' "$f" | tr 'A-Z' 'a-z' | tr ' ' 'SEP')
  [ "$new" = "$f" ] || mv -- "$f" "$new"
done
"""


@family("script-normalize-names", category="shell-scripting", difficulty=Difficulty.MEDIUM)
class ScriptRename(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        return {"script": rng.choice(["/app/bin/normalize.sh", "/app/tools/fixnames.sh",
                                      "/app/bin/clean-names.sh", "/app/scripts/rename.sh",
                                      "/app/normalize", "/app/tools/tidy.sh"]),
                "sep": rng.choice(["_", "-", "."]), "case": rng.choice(["lower", "upper"])}

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        s, sep, case = p["script"], p["sep"], p["case"]
        return [
            f"Write an executable bash script {s} that takes a directory as its only "
            f"argument and renames every regular file directly inside it (not in "
            f"subdirectories, and not directories themselves) to its {case}case name with each "
            f"space replaced by `{sep}`.",
            f"Create {s} (executable): given a directory path as argument, it must rename the "
            f"files in that directory (non-recursively; leave directories alone) so that "
            f"names are all {case}case and spaces become `{sep}`.",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        s, sep, case = p["script"], p["sep"], p["case"]
        body = SCRIPT.replace("SEP", sep)
        if case == "upper":
            body = body.replace("tr 'A-Z' 'a-z'", "tr 'a-z' 'A-Z'")
        check = f"""
import tempfile

CASES = ["My Report.TXT", "plain.txt", "Two  Spaces.md", "UPPER", "mixed Case File.csv"]


def test_renames_hidden_inputs():
    with tempfile.TemporaryDirectory() as d:
        for c in CASES:
            Path(d, c).write_text(c)
        Path(d, "Sub Dir").mkdir()
        Path(d, "Sub Dir", "Inner File").write_text("x")
        code, out = sh(f"{s} '{{d}}'")
        assert code == 0, out
        want = {{c.{case}().replace(" ", {sep!r}): c for c in CASES}}
        got = {{p.name: p.read_text() for p in Path(d).iterdir() if p.is_file()}}
        assert got == want, got
        assert Path(d, "Sub Dir", "Inner File").exists()
"""
        write = write_step(s, body)
        return Blueprint(solution=(write, f"chmod +x {s}"), check=check, mutants={
            "case-only": (write_step(s, body.replace(f" | tr ' ' '{sep}'", "")),
                               f"chmod +x {s}"),
            "recursive-too": (write_step(s, body.replace(
                'cd "$1"\nfor f in *; do', 'cd "$1"\nfind . -depth -mindepth 1 -name "* *" '
                '-type d -exec true {} \\;\nfor f in * */*; do')), f"chmod +x {s}"),
        })
