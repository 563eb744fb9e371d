"""Write a backup-rotation script (graded on hidden inputs)."""

from __future__ import annotations

import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.families._kit import write_step
from synth.spec import Blueprint

SCRIPT = """#!/bin/bash
set -e
dir="$1"; keep="$2"
ls -1t "$dir"/*.EXT 2>/dev/null | tail -n +$((keep + 1)) | while read -r f; do rm -f -- "$f"; done
"""


@family("script-rotate-backups", category="shell-scripting", difficulty=Difficulty.MEDIUM)
class ScriptRotate(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        return {"script": rng.choice(["/app/bin/rotate.sh", "/app/rotate-backups.sh",
                                      "/app/tools/prune.sh", "/app/bin/keep-newest",
                                      "/app/scripts/rotate.sh"]),
                "ext": rng.choice(["bak", "tgz", "dump", "snap", "old"])}

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        s, e = p["script"], p["ext"]
        return [
            f"Write an executable script {s} DIR N that deletes all *.{e} files in DIR except "
            f"the N most recently modified ones. Other files in DIR must not be touched.",
            f"Create {s} (executable, two arguments: a directory and a count N). It keeps the "
            f"N newest (by modification time) .{e} files of the directory and removes the "
            f"older .{e} files; nothing else is deleted.",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        s, e = p["script"], p["ext"]
        body = SCRIPT.replace("EXT", e)
        check = f"""
import tempfile
import time


def _run(n_files, keep):
    with tempfile.TemporaryDirectory() as d:
        now = time.time()
        for i in range(n_files):
            f = Path(d, f"db-{{i:02d}}.{e}")
            f.write_text(str(i))
            os.utime(f, (now - 1000 + i * 10, now - 1000 + i * 10))  # higher i = newer
        Path(d, "notes.txt").write_text("keep me")
        os.utime(Path(d, "notes.txt"), (now - 5000, now - 5000))
        code, out = sh(f"{s} '{{d}}' {{keep}}")
        assert code == 0, out
        left = sorted(p.name for p in Path(d).iterdir())
        want = sorted([f"db-{{i:02d}}.{e}" for i in range(max(0, n_files - keep), n_files)]
                      + ["notes.txt"])
        assert left == want, (left, want)


def test_keeps_newest():
    _run(7, 3)


def test_keep_more_than_present():
    _run(2, 5)
"""
        write = write_step(s, body)
        return Blueprint(solution=(write, f"chmod +x {s}"), check=check, mutants={
            "off-by-one": (write_step(s, body.replace("keep + 1", "keep")), f"chmod +x {s}"),
            "any-extension": (write_step(s, body.replace(f'"$dir"/*.{e}', '"$dir"/*')),
                              f"chmod +x {s}"),
        })
