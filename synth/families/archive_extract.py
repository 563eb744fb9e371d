"""Extract only some members of a tarball."""

from __future__ import annotations

import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.families._kit import WORDS
from synth.spec import Blueprint


@family("archive-extract", category="archives", difficulty=Difficulty.EASY)
class ArchiveExtract(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        ext = rng.choice(["conf", "yaml", "json"])
        others = [e for e in ("txt", "log", "md", "bin") if e != ext]
        dirs = ["", "etc/", "etc/app/", "srv/web/", "opt/tool/cfg/"]
        members = {}
        for w in rng.sample(WORDS, 12):
            e = ext if rng.random() < 0.5 else rng.choice(others)
            members[f"{rng.choice(dirs)}{w}.{e}"] = f"{w}={rng.randint(0, 999)}\n"
        members[f"etc/main.{ext}"] = "main=1\n"
        members["etc/readme.txt"] = "not wanted\n"
        return {"archive": "/app/bundle.tar.gz", "ext": ext, "dest": rng.choice(
            ["/app/extracted", "/app/config"]), "members": members}

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        a, e, d = p["archive"], p["ext"], p["dest"]
        return [
            f"Extract from {a} only the files whose name ends in .{e}, into {d}, keeping "
            f"their directory structure from the archive. No other file may be extracted.",
            f"{a} contains many files. Put every .{e} file of it below {d}, preserving the "
            f"paths they have inside the archive; {d} must contain nothing else.",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        a, e, d = p["archive"], p["ext"], p["dest"]
        files = {f"/tmp/src/{k}": v for k, v in p["members"].items()}
        setup = (f"tar -czf {a} -C /tmp/src . && rm -rf /tmp/src",)
        want = {k: v for k, v in p["members"].items() if k.endswith("." + e)}
        solve = f"mkdir -p {d}\ntar -xzf {a} -C {d} --wildcards '*.{e}'"
        check = f"""
def test_exact_members():
    root = Path({d!r})
    got = {{str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file()}}
    assert got == {want!r}, sorted(set(got) ^ set({want!r}))
"""
        return Blueprint(files=files, setup=setup, solution=(solve,), check=check, mutants={
            "everything": (f"mkdir -p {d}\ntar -xzf {a} -C {d}",),
            "flattened": (f"mkdir -p {d}\ntar -xzf {a} -C {d} --wildcards '*.{e}' "
                          f"--transform 's,.*/,,'",),
        })
