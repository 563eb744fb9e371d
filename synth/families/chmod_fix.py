"""Set file modes by a policy."""

from __future__ import annotations

import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.families._kit import WORDS
from synth.spec import Blueprint


@family("fix-permissions", category="permissions-users", difficulty=Difficulty.EASY)
class ChmodFix(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        w = rng.sample(WORDS, 9)
        return {"root": rng.choice(["/app/site", "/app/deploy"]),
                "scripts": [f"{x}.sh" for x in w[:3]], "secrets": [f"{x}.key" for x in w[3:5]],
                "public": [f"{x}.html" for x in w[5:9]],
                "public_mode": rng.choice(["644", "444"])}

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        r, pm = p["root"], p["public_mode"]
        return [
            f"Fix the permissions under {r}: every file in {r}/bin must have mode 755, the "
            f"directory {r}/secrets mode 700 and each file in it mode 600, and every file "
            f"in {r}/public mode {pm}.",
            f"Apply this permission policy in {r}: scripts in bin/ -> 0755; the secrets/ "
            f"directory -> 0700 and its files -> 0600; files in public/ -> 0{pm}.",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        r, pm = p["root"], p["public_mode"]
        files = {f"{r}/bin/{f}": f"#!/bin/sh\necho {f}\n" for f in p["scripts"]}
        files.update({f"{r}/secrets/{f}": f"secret-{f}\n" for f in p["secrets"]})
        files.update({f"{r}/public/{f}": f"<p>{f}</p>\n" for f in p["public"]})
        setup = (f"chmod 600 {r}/bin/* && chmod 666 {r}/secrets/* && chmod 777 {r}/secrets "
                 f"&& chmod 640 {r}/public/*",)
        want = {f"{r}/bin/{f}": 0o755 for f in p["scripts"]}
        want.update({f"{r}/secrets/{f}": 0o600 for f in p["secrets"]})
        want.update({f"{r}/public/{f}": int(pm, 8) for f in p["public"]})
        want[f"{r}/secrets"] = 0o700
        solve = [f"chmod 755 {r}/bin/*", f"chmod 600 {r}/secrets/*", f"chmod 700 {r}/secrets",
                 f"chmod {pm} {r}/public/*"]
        check = f"""
import stat


def test_modes():
    for path, mode in {want!r}.items():
        got = stat.S_IMODE(os.stat(path).st_mode)
        assert got == mode, (path, oct(got), oct(mode))
"""
        return Blueprint(files=files, setup=setup, solution=tuple(solve), check=check,
                         mutants={
                             "secrets-dir-open": tuple(solve[:2] + solve[3:]),
                             "world-writable-bin": (f"chmod 777 {r}/bin/*", *solve[1:]),
                         })
