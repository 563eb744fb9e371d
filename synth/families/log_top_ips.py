"""Top client addresses by number of server errors in an access log."""

from __future__ import annotations

import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.spec import Blueprint


@family("log-top-ips", category="log-analysis", difficulty=Difficulty.MEDIUM)
class LogTopIps(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        ips = [f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
               for _ in range(8)]
        ips = list(dict.fromkeys(ips))
        err_counts = rng.sample(range(1, 25), len(ips))  # distinct: unambiguous ranking
        entries = []
        for ip, n in zip(ips, err_counts, strict=False):
            entries += [(ip, rng.choice([500, 502, 503, 504])) for _ in range(n)]
            entries += [(ip, rng.choice([200, 301, 404])) for _ in range(rng.randint(0, 6))]
        # A noisy client: many requests and many 4xx, few 5xx, so counting all is wrong.
        noisy = "192.168.7.7"
        entries += [(noisy, rng.choice([200, 404, 403])) for _ in range(60)] + [(noisy, 500)]
        rng.shuffle(entries)
        paths = ["/", "/login", "/api/items", "/static/app.js", "/cart"]
        lines = [f'{ip} - - [10/Oct/2024:13:{i % 60:02d}:00 +0000] "GET {rng.choice(paths)} '
                 f'HTTP/1.1" {st} {rng.randint(100, 5000)}' for i, (ip, st) in enumerate(entries)]
        return {"log": "/app/access.log", "n": rng.randint(3, 5), "lines": lines,
                "out": rng.choice(["/app/top_ips.txt", "/app/offenders.txt"])}

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        log, n, o = p["log"], p["n"], p["out"]
        return [
            f"{log} is a web server access log (common log format). Find the {n} client "
            f"IPs with the most responses with a 5xx status code and write them to {o}, one "
            f"per line as `IP COUNT`, most errors first.",
            f"Which {n} clients caused the most server errors (HTTP status 500-599) in {log}? "
            f"Write `IP COUNT` lines to {o}, sorted by count, highest first.",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        log, n, o = p["log"], p["n"], p["out"]
        counts: dict[str, int] = {}
        for ln in p["lines"]:
            parts = ln.split()
            if parts[8].startswith("5"):
                counts[parts[0]] = counts.get(parts[0], 0) + 1
        want = [f"{ip} {c}" for ip, c in sorted(counts.items(), key=lambda x: (-x[1], x[0]))[:n]]
        solve = (f"awk '$9 ~ /^5/ {{print $1}}' {log} | sort | uniq -c | sort -k1,1nr -k2,2 "
                 f"| head -n {n} | awk '{{print $2, $1}}' > {o}")
        check = f"""
def test_top():
    got = [ln.strip() for ln in text({o!r}).splitlines() if ln.strip()]
    assert got == {want!r}, got
"""
        return Blueprint(files={log: "\n".join(p["lines"]) + "\n"}, solution=(solve,),
                         check=check, mutants={
                             "all-statuses": (solve.replace("$9 ~ /^5/ ", ""),),
                             "client-errors-too": (solve.replace("/^5/", "/^[45]/"),),
                         })
