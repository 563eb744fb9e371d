"""Create a compressed backup with exclusions."""

from __future__ import annotations

import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.families._kit import WORDS
from synth.spec import Blueprint


@family("archive-create", category="archives", difficulty=Difficulty.MEDIUM)
class ArchiveCreate(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        files = {}
        for w in rng.sample(WORDS, 10):
            d = rng.choice(["src/", "src/lib/", "docs/", ""])
            files[f"{d}{w}.{rng.choice(['py', 'md', 'txt'])}"] = f"{w}\n"
        for w in rng.sample(WORDS, 3):
            files[f"{rng.choice(['', 'src/'])}{w}.log"] = "log line\n"
        skip = rng.choice(["tmp", "cache", "build"])
        files[f"{skip}/junk.txt"] = "junk\n"
        files[f"{skip}/deep/more.txt"] = "junk\n"
        return {"root": "/app/project", "out": rng.choice(["/app/backup.tar.gz",
                                                           "/app/out/project.tar.gz"]),
                "skip": skip, "files": files}

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        r, o, s = p["root"], p["out"], p["skip"]
        return [
            f"Create a gzip-compressed tar archive {o} of the contents of {r}. Member paths "
            f"must be relative to {r} (like src/x.py). Leave out all *.log files and the "
            f"{s}/ directory.",
            f"Back up {r} into {o} (tar + gzip) with paths relative to {r}, excluding every "
            f"file ending in .log and everything under {s}/.",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        r, o, s = p["root"], p["out"], p["skip"]
        want = {k: v for k, v in p["files"].items()
                if not k.endswith(".log") and not k.startswith(s + "/")}
        solve = (f"mkdir -p $(dirname {o})\ntar -czf {o} -C {r} --exclude='*.log' "
                 f"--exclude='./{s}' .")
        check = f"""
import tarfile


def test_members():
    with tarfile.open({o!r}, "r:gz") as tar:
        got = {{m.name.removeprefix("./"): tar.extractfile(m).read().decode()
               for m in tar.getmembers() if m.isfile()}}
    assert got == {want!r}, sorted(set(got) ^ set({want!r}))
"""
        return Blueprint(files={f"{r}/{k}": v for k, v in p["files"].items()},
                         solution=(solve,), check=check, mutants={
                             "keeps-logs": (solve.replace("--exclude='*.log' ", ""),),
                             "not-compressed": (solve.replace("-czf", "-cf"),),
                         })
