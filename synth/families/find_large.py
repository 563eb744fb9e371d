"""List the files above a size threshold."""

from __future__ import annotations

import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.families._kit import words
from synth.spec import Blueprint


@family("find-large-files", category="file-operations", difficulty=Difficulty.EASY)
class FindLarge(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        limit = rng.randint(8, 40) * 100
        names = words(rng, 10)
        dirs = ["", "logs/", "cache/", "media/deep/"]
        sizes = [limit, limit + 1, limit - 1] + [rng.randint(10, limit * 2) for _ in range(7)]
        files = {f"{rng.choice(dirs)}{n}.dat": s for n, s in zip(names, sizes, strict=False)}
        out = rng.choice(["/app/large.txt", "/app/report/big-files.txt", "/app/over.txt"])
        return {"root": "/app/data", "limit": limit, "files": files, "out": out}

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        r, n, o = p["root"], p["limit"], p["out"]
        return [
            f"Find every regular file under {r} (recursively) that is strictly larger than "
            f"{n} bytes. Write their paths relative to {r}, one per line, sorted, to {o}.",
            f"Which files below {r} exceed {n} bytes (more than {n}, not equal)? Put their "
            f"paths, relative to {r} and in sorted order, one per line into {o}.",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        r, n, o = p["root"], p["limit"], p["out"]
        files = {f"{r}/{k}": ("x" * (s - 1) + "\n") for k, s in p["files"].items()}
        expected = sorted(k for k, s in p["files"].items() if s > n)
        step = f"mkdir -p $(dirname {o})\ncd {r} && find . -type f -size +{n}c | sed 's|^\\./||' | LC_ALL=C sort > {o}"
        check = f"""
def test_list():
    got = [ln for ln in text({o!r}).splitlines() if ln.strip()]
    assert got == {expected!r}, got
"""
        return Blueprint(files=files, solution=(step,), check=check, mutants={
            "at-least": (step.replace(f"+{n}c", f"+{n - 1}c"),),
            "absolute-paths": (step.replace(" | sed 's|^\\./||'", ""),),
        })
