"""Sum a CSV column per group."""

from __future__ import annotations

import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.families._kit import CITIES, WORDS, py_step
from synth.spec import Blueprint


@family("csv-group-sum", category="data-wrangling", difficulty=Difficulty.EASY)
class CsvGroupSum(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        regions = rng.sample(CITIES, 4)
        products = rng.sample(WORDS, 5)
        rows = [[rng.choice(regions), rng.choice(products), f"{rng.randint(100, 99999) / 100:.2f}",
                 str(rng.randint(1, 30))] for _ in range(rng.randint(15, 30))]
        key = rng.choice(["region", "product"])
        return {"src": "/app/sales.csv", "out": rng.choice(["/app/totals.csv", "/app/summary.csv"]),
                "key": key, "rows": rows}

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        s, o, k = p["src"], p["out"], p["key"]
        return [
            f"{s} has the columns region,product,amount,qty. Write {o} with the header "
            f"`{k},total` and one row per {k}: the sum of amount for that {k}, with two "
            f"decimals, rows sorted by {k}.",
            f"Aggregate {s}: total the amount column per {k}. Save the result as CSV to {o} "
            f"(header `{k},total`, totals rounded to 2 decimal places, ordered by {k}).",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        s, o, k = p["src"], p["out"], p["key"]
        col = 0 if k == "region" else 1
        csv_text = "region,product,amount,qty\n" + "".join(",".join(r) + "\n" for r in p["rows"])
        totals: dict[str, float] = {}
        for r in p["rows"]:
            totals[r[col]] = totals.get(r[col], 0.0) + float(r[2])
        want = {g: round(v, 2) for g, v in sorted(totals.items())}
        code = f"""
import csv
from collections import defaultdict
tot = defaultdict(float)
with open({s!r}) as fh:
    for row in csv.DictReader(fh):
        tot[row[{k!r}]] += float(row["amount"])
with open({o!r}, "w") as fh:
    fh.write("{k},total\\n")
    for g in sorted(tot):
        fh.write(f"{{g}},{{tot[g]:.2f}}\\n")
"""
        check = f"""
import csv


def test_totals():
    with open({o!r}) as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == [{k!r}, "total"], rows[0]
    got = {{r[0]: float(r[1]) for r in rows[1:] if r}}
    want = {want!r}
    assert list(got) == list(want), list(got)
    for g, v in want.items():
        assert abs(got[g] - v) < 0.006, (g, got[g], v)
"""
        return Blueprint(files={s: csv_text}, solution=(py_step(code),), check=check, mutants={
            "sum-qty": (py_step(code.replace('float(row["amount"])', 'float(row["qty"])')),),
            "skip-first-row": (py_step(code.replace(
                "for row in csv.DictReader(fh):",
                "for i, row in enumerate(csv.DictReader(fh)):\n        if i == 0:\n"
                "            continue")),),
        })
