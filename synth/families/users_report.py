"""Report accounts from the user database."""

from __future__ import annotations

import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.families._kit import NAMES
from synth.spec import Blueprint


@family("users-report", category="permissions-users", difficulty=Difficulty.EASY)
class UsersReport(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        names = rng.sample(NAMES, 7)
        shells = ["/bin/bash", "/bin/sh", "/usr/sbin/nologin", "/bin/bash"]
        uids = [1000, *sorted(rng.sample(range(1001, 1100), len(names) - 1))]
        users = [[n, uid, rng.choice(shells)] for n, uid in zip(names, uids, strict=False)]
        users[0][2] = "/bin/bash"  # uid exactly 1000 with bash: the boundary
        users.append([f"svc{rng.randint(1, 99)}", rng.randint(100, 999), "/bin/bash"])  # system
        return {"users": users, "out": rng.choice(["/app/users.txt", "/app/humans.txt"])}

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        o = p["out"]
        return [
            f"List the login names of all accounts on this system with a UID of 1000 or more "
            f"whose login shell is /bin/bash. Write them to {o}, one per line, sorted "
            f"alphabetically.",
            f"Write to {o} (sorted, one per line) the user names whose UID is at least 1000 "
            f"and whose shell is exactly /bin/bash, according to the system's account database.",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        o = p["out"]
        setup = tuple(f"useradd -M -u {uid} -s {sh} {n}" for n, uid, sh in p["users"])
        want = sorted(n for n, uid, sh in p["users"] if uid >= 1000 and sh == "/bin/bash")
        solve = f"awk -F: '$3 >= 1000 && $3 != 65534 && $7 == \"/bin/bash\" {{print $1}}' /etc/passwd | sort > {o}"
        check = f"""
def test_users():
    got = [ln.strip() for ln in text({o!r}).splitlines() if ln.strip()]
    assert got == {want!r}, got
"""
        return Blueprint(setup=setup, solution=(solve,), check=check, mutants={
            "above-1000": (solve.replace("$3 >= 1000", "$3 > 1000"),),
            "any-shell": (solve.replace(' && $7 == "/bin/bash"', ""),),
        })
