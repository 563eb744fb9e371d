"""Load a CSV into a typed SQLite table."""

from __future__ import annotations

import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.families._kit import NAMES, WORDS, py_step
from synth.spec import Blueprint


@family("sqlite-import-csv", category="sqlite", difficulty=Difficulty.MEDIUM)
class SqliteImport(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        rows = [[str(i), f"{rng.choice(NAMES)} {rng.choice(WORDS)}",
                 f"{rng.choice(NAMES)}{i}@{rng.choice(WORDS)}.org", f"{rng.randint(0, 1000) / 10}"]
                for i in rng.sample(range(1, 500), rng.randint(12, 25))]
        table = rng.choice(["people", "members", "contacts"])
        return {"csv": f"/app/{table}.csv", "db": f"/app/{table}.db", "table": table,
                "rows": rows}

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        c, d, t = p["csv"], p["db"], p["table"]
        return [
            f"Create the SQLite database {d} with a table `{t}` (id INTEGER PRIMARY KEY, name "
            f"TEXT, email TEXT, score REAL) holding every row of {c} (its first line is a "
            f"header). Scores must be stored as real numbers and ids as integers. python3 "
            f"and its sqlite3 module are available.",
            f"Import {c} (header line: id,name,email,score) into a new SQLite file {d}, table "
            f"`{t}` with columns id INTEGER PRIMARY KEY, name TEXT, email TEXT, score REAL. "
            f"Every data row must be present with proper numeric types.",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        c, d, t = p["csv"], p["db"], p["table"]
        csv_text = "id,name,email,score\n" + "".join(",".join(r) + "\n" for r in p["rows"])
        code = f"""
import csv, sqlite3
db = sqlite3.connect({d!r})
db.execute("CREATE TABLE {t}(id INTEGER PRIMARY KEY, name TEXT, email TEXT, score REAL)")
rows = list(csv.DictReader(open({c!r})))
db.executemany("INSERT INTO {t} VALUES (?, ?, ?, ?)",
               [(int(r["id"]), r["name"], r["email"], float(r["score"])) for r in rows])
db.commit()
"""
        want = sorted((int(r[0]), r[1], r[2], float(r[3])) for r in p["rows"])
        check = f"""
import sqlite3


def test_rows():
    db = sqlite3.connect({d!r})
    got = sorted(db.execute("SELECT id, name, email, score FROM {t}").fetchall())
    assert got == [tuple(r) for r in {want!r}], got[:3]


def test_types():
    db = sqlite3.connect({d!r})
    kinds = set(db.execute("SELECT typeof(id), typeof(score) FROM {t}").fetchall())
    assert kinds <= {{("integer", "real")}}, kinds
"""
        return Blueprint(files={c: csv_text}, solution=(py_step(code),), check=check, mutants={
            "text-columns": (py_step(code.replace('float(r["score"])', 'r["score"]').replace(
                "score REAL", "score TEXT")),),
            "drop-last-row": (py_step(code.replace("for r in rows]", "for r in rows[:-1]]")),),
        })
