"""Remove duplicate lines, keeping the first occurrence and the order."""

from __future__ import annotations

import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.families._kit import NAMES, WORDS
from synth.spec import Blueprint


@family("dedupe-lines", category="text-processing", difficulty=Difficulty.EASY)
class DedupeLines(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        items = [f"{rng.choice(NAMES)}.{rng.choice(WORDS)}@{rng.randint(1, 99)}" for _ in range(12)]
        items = list(dict.fromkeys(items))
        lines = items + [rng.choice(items) for _ in range(10)]
        rng.shuffle(lines)
        # Guarantee a non-adjacent repeat and an order that is not sorted.
        lines = [items[-1], *lines, items[0], items[-1]]
        src = rng.choice(["/app/entries.txt", "/app/list.txt", "/app/data/ids.txt"])
        return {"src": src, "out": src.replace(".txt", ".unique.txt"), "lines": lines}

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        s, o = p["src"], p["out"]
        return [
            f"{s} contains repeated lines. Write {o} with each distinct line exactly once, "
            f"in the order of its first appearance in {s}. Do not modify {s}.",
            f"Create {o} from {s} by dropping every line that already appeared earlier in the "
            f"file; the remaining lines keep their original order.",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        s, o = p["src"], p["out"]
        content = "\n".join(p["lines"]) + "\n"
        want = list(dict.fromkeys(p["lines"]))
        check = f"""
def test_unique_in_order():
    got = text({o!r}).splitlines()
    assert got == {want!r}, got


def test_source_untouched():
    assert text({s!r}) == {content!r}
"""
        return Blueprint(files={s: content}, solution=(f"awk '!seen[$0]++' {s} > {o}",),
                         check=check, mutants={
                             "sorted": (f"sort -u {s} > {o}",),
                             "adjacent-only": (f"uniq {s} > {o}",),
                         })
