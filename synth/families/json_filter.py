"""Filter and project a JSON array of records."""

from __future__ import annotations

import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.families._kit import CITIES, NAMES, py_step
from synth.spec import Blueprint


@family("json-filter", category="data-wrangling", difficulty=Difficulty.EASY)
class JsonFilter(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        age = rng.randint(25, 45)
        city = rng.choice(CITIES[:4])
        users = [{"name": n.capitalize(), "age": rng.randint(18, 70),
                  "city": rng.choice(CITIES[:4]), "active": rng.random() < 0.6}
                 for n in rng.sample(NAMES, 18)]
        # Boundary cases: exactly the age, and inactive ones that otherwise qualify.
        users[0].update(age=age, city=city, active=True)
        users[1].update(age=age + 3, city=city, active=False)
        users[2].update(age=age + 1, city=city, active=True)
        rng.shuffle(users)
        return {"src": "/app/users.json", "out": rng.choice(["/app/selected.json", "/app/out.json"]),
                "age": age, "city": city, "users": users}

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        s, o, a, c = p["src"], p["out"], p["age"], p["city"]
        return [
            f"{s} holds a JSON array of users (name, age, city, active). Write to {o} a JSON "
            f"array of the names of the active users living in {c} who are at least {a} years "
            f"old, sorted alphabetically.",
            f"Select from {s} every user with active = true, city = \"{c}\" and age >= {a}. "
            f"Store just their names, as a sorted JSON list, in {o}.",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        s, o, a, c = p["src"], p["out"], p["age"], p["city"]
        import json as _json

        want = sorted(u["name"] for u in p["users"] if u["active"] and u["city"] == c
                      and u["age"] >= a)
        code = f"""
import json
users = json.load(open({s!r}))
names = sorted(u["name"] for u in users if u["active"] and u["city"] == {c!r} and u["age"] >= {a})
json.dump(names, open({o!r}, "w"))
"""
        check = f"""
def test_selection():
    assert json.loads(text({o!r})) == {want!r}
"""
        return Blueprint(files={s: _json.dumps(p["users"], indent=1) + "\n"},
                         solution=(py_step(code),), check=check, mutants={
                             "older-than": (py_step(code.replace(f'>= {a}', f'> {a}')),),
                             "ignore-active": (py_step(code.replace('u["active"] and ', "")),),
                         })
