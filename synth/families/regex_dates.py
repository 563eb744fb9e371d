"""Rewrite dates to ISO format in place."""

from __future__ import annotations

import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.families._kit import WORDS
from synth.spec import Blueprint


@family("regex-iso-dates", category="regex", difficulty=Difficulty.MEDIUM)
class RegexDates(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        def date() -> tuple[int, int, int]:
            d, m = rng.randint(13, 28), rng.randint(1, 12)  # day > 12: day/month order matters
            return d, m, rng.randint(1990, 2030)

        lines = []
        for _ in range(rng.randint(8, 14)):
            a, b = date(), date()
            w = " ".join(rng.sample(WORDS, 3))
            form = rng.choice(["one", "two", "none"])
            if form == "one":
                lines.append(f"{w} on {a[0]:02d}/{a[1]:02d}/{a[2]} ok")
            elif form == "two":
                lines.append(f"from {a[0]:02d}/{a[1]:02d}/{a[2]} to {b[0]:02d}/{b[1]:02d}/{b[2]} {w}")
            else:
                lines.append(f"{w} ratio 3/4 build 1.2.3")
        lines.append("from 14/02/2020 to 15/03/2021 twice")
        return {"src": rng.choice(["/app/events.txt", "/app/schedule.log"]), "lines": lines}

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        s = p["src"]
        return [
            f"{s} contains dates written as DD/MM/YYYY. Rewrite the file in place so that "
            f"every such date becomes YYYY-MM-DD; all other text must stay exactly as it is.",
            f"Convert, in place, all DD/MM/YYYY dates in {s} to ISO 8601 (YYYY-MM-DD). Lines "
            f"may hold several dates; nothing else in the file may change.",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        import re

        s = p["src"]
        src = "\n".join(p["lines"]) + "\n"
        want = re.sub(r"\b(\d{2})/(\d{2})/(\d{4})\b", r"\3-\2-\1", src)
        solve = f"sed -E -i 's#\\b([0-9]{{2}})/([0-9]{{2}})/([0-9]{{4}})\\b#\\3-\\2-\\1#g' {s}"
        check = f"""
def test_rewritten():
    assert text({s!r}) == {want!r}
"""
        return Blueprint(files={s: src}, solution=(solve,), check=check, mutants={
            "month-day-swapped": (solve.replace("#\\3-\\2-\\1#", "#\\3-\\1-\\2#"),),
            "first-per-line": (solve.replace("#g' ", "#' "),),
        })
