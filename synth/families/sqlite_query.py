"""Answer a question from a SQLite database (python3's sqlite3; no sqlite3 CLI needed)."""

from __future__ import annotations

import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.families._kit import NAMES, py_step
from synth.spec import Blueprint


@family("sqlite-top-customers", category="sqlite", difficulty=Difficulty.MEDIUM)
class SqliteTop(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        names = [n.capitalize() for n in rng.sample(NAMES, 8)]
        paid = rng.sample(range(50, 5000, 7), len(names))  # distinct paid totals
        orders = []
        for cid, total in enumerate(paid, start=1):
            a = rng.randint(1, total - 1)
            orders += [(cid, a, "paid"), (cid, total - a, "paid")]
            orders.append((cid, rng.randint(1, 900), rng.choice(["refunded", "pending"])))
        # The customer with the smallest paid total has one huge cancelled order.
        low = paid.index(min(paid)) + 1
        orders.append((low, 100000, "cancelled"))
        rng.shuffle(orders)
        return {"db": "/app/shop.db", "k": rng.randint(2, 4), "names": names, "orders": orders,
                "out": rng.choice(["/app/answer.txt", "/app/top_customers.txt"])}

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        db, k, o = p["db"], p["k"], p["out"]
        return [
            f"The SQLite database {db} has tables customers(id, name) and orders(id, "
            f"customer_id, amount, status). Write to {o} the names of the {k} customers with "
            f"the highest total amount over orders whose status is 'paid', one per line, "
            f"highest first. (python3 with its sqlite3 module is available.)",
            f"Using {db} (customers, orders), rank customers by the sum of amount of their "
            f"orders with status 'paid'. Put the top {k} names in {o}, one name per line, in "
            f"descending order of that sum. Python 3's sqlite3 module can read the database.",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        db, k, o = p["db"], p["k"], p["out"]
        sql = ["CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT NOT NULL);",
               "CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER, amount INTEGER,"
               " status TEXT);"]
        sql += [f"INSERT INTO customers VALUES({i}, '{n}');" for i, n in enumerate(p["names"], 1)]
        sql += [f"INSERT INTO orders(customer_id, amount, status) VALUES({c}, {a}, '{s}');"
                for c, a, s in p["orders"]]
        totals: dict[int, int] = {}
        for c, a, s in p["orders"]:
            if s == "paid":
                totals[c] = totals.get(c, 0) + a
        ranked = sorted(totals, key=lambda c: -totals[c])[:k]
        want = [p["names"][c - 1] for c in ranked]
        query = ("SELECT c.name FROM customers c JOIN orders o ON o.customer_id = c.id "
                 "WHERE o.status = 'paid' GROUP BY c.id ORDER BY SUM(o.amount) DESC LIMIT ?")
        code = f"""
import sqlite3
rows = sqlite3.connect({db!r}).execute({query!r}, ({k},)).fetchall()
open({o!r}, "w").write("".join(r[0] + "\\n" for r in rows))
"""
        make = (f"python3 -c \"import sqlite3; c = sqlite3.connect('{db}'); "
                f"c.executescript(open('/tmp/seed.sql').read()); c.commit()\" && rm /tmp/seed.sql")
        check = f"""
def test_answer():
    got = [ln.strip() for ln in text({o!r}).splitlines() if ln.strip()]
    assert got == {want!r}, got
"""
        return Blueprint(files={"/tmp/seed.sql": "\n".join(sql) + "\n"}, setup=(make,),
                         solution=(py_step(code),), check=check, mutants={
                             "any-status": (py_step(code.replace("WHERE o.status = 'paid' ", "")),),
                             "one-short": (py_step(code.replace(f"({k},)", f"({k - 1},)")),),
                         })
