"""Extract e-mail addresses from free text."""

from __future__ import annotations

import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.families._kit import NAMES, WORDS
from synth.spec import Blueprint


@family("regex-emails", category="regex", difficulty=Difficulty.EASY)
class RegexEmails(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        emails = list(dict.fromkeys(
            f"{rng.choice(NAMES)}{rng.choice(['.', '_', ''])}{rng.choice(WORDS)}@"
            f"{rng.choice(WORDS)}.{rng.choice(['com', 'org', 'io', 'co.uk'])}" for _ in range(9)))
        lines = []
        for i, e in enumerate(emails + emails[:3]):  # some twice
            shown = e.upper() if i % 4 == 1 else e  # some uppercase
            filler = " ".join(rng.sample(WORDS, 4))
            lines.append(rng.choice([f"{filler} <{shown}> {filler}", f"contact: {shown}, {filler}",
                                     f"{filler} ({shown})"]))
        # Decoys that are not addresses: no dot in the domain, no local part.
        lines += ["ping root@localhost now", f"twitter handle @{rng.choice(WORDS)} only",
                  "version 2.0 @ 10am"]
        rng.shuffle(lines)
        return {"src": "/app/corpus.txt", "out": rng.choice(["/app/emails.txt", "/app/found.txt"]),
                "lines": lines, "emails": emails}

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        s, o = p["src"], p["out"]
        return [
            f"Extract every e-mail address (local@domain, where the domain has at least one "
            f"dot) from {s}. Write them lowercased, without duplicates, sorted, one per line "
            f"to {o}.",
            f"{s} mentions e-mail addresses in running text. Collect the distinct addresses "
            f"(an address needs a dotted domain such as x@y.com), lowercase them and save them "
            f"sorted, one per line, in {o}.",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        s, o = p["src"], p["out"]
        want = sorted({e.lower() for e in p["emails"]})
        solve = (f"grep -oE '[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)*\\.[A-Za-z]{{2,}}' "
                 f"{s} | tr 'A-Z' 'a-z' | sort -u > {o}")
        check = f"""
def test_emails():
    got = [ln.strip() for ln in text({o!r}).splitlines() if ln.strip()]
    assert got == {want!r}, got
"""
        return Blueprint(files={s: "\n".join(p["lines"]) + "\n"}, solution=(solve,), check=check,
                         mutants={
                             "keeps-case": (solve.replace("| tr 'A-Z' 'a-z' ", "").replace(
                                 "sort -u", "sort -uf"),),
                             "loose-domain": (f"grep -oE '[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+' {s} "
                                              f"| tr 'A-Z' 'a-z' | sort -u > {o}",),
                         })
