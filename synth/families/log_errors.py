"""Count ERROR-level log lines per service."""

from __future__ import annotations

import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.families._kit import SERVICES, WORDS
from synth.spec import Blueprint

LEVELS = ("INFO", "DEBUG", "WARN", "ERROR")


@family("log-error-count", category="log-analysis", difficulty=Difficulty.MEDIUM)
class LogErrors(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        services = rng.sample(SERVICES, 5)
        lines = []
        for _i in range(rng.randint(40, 80)):
            svc = rng.choice(services[:-1])  # the last service never errors
            lvl = rng.choice(LEVELS)
            msg = " ".join(rng.sample(WORDS, 3))
            if lvl == "INFO" and rng.random() < 0.3:
                msg += " recovered after ERROR"  # the word alone is not the level
            lines.append(f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T0{rng.randint(0, 9)}:"
                         f"{rng.randint(10, 59)}:{rng.randint(10, 59)}Z {lvl} {svc} {msg}")
        lines += [f"2024-01-01T00:00:00Z INFO {services[-1]} started",
                  f"2024-01-01T00:00:01Z ERROR {services[0]} fatal {rng.choice(WORDS)}"]
        return {"log": "/app/logs/app.log", "out": rng.choice(["/app/errors.json",
                                                                "/app/report/errors.json"]),
                "lines": lines}

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        log, o = p["log"], p["out"]
        return [
            f"Each line of {log} is `TIMESTAMP LEVEL SERVICE MESSAGE`. Write {o}: a JSON object "
            f"mapping each service that logged at least one line at level ERROR to its number "
            f"of ERROR lines. Services without errors must not appear.",
            f"Summarize the errors in {log} (format: timestamp, level, service, message, "
            f"space-separated). Save a JSON object {{service: count}} of lines whose level is "
            f"ERROR to {o}; leave out services that have none.",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        log, o = p["log"], p["out"]
        want: dict[str, int] = {}
        for ln in p["lines"]:
            parts = ln.split()
            if parts[1] == "ERROR":
                want[parts[2]] = want.get(parts[2], 0) + 1
        solve = (f"mkdir -p $(dirname {o})\nawk '$2==\"ERROR\" {{c[$3]++}} END {{printf \"{{\"; "
                 f"n=0; for (s in c) {{ if (n++) printf \",\"; printf \"\\\"%s\\\": %d\", s, c[s] }} "
                 f"print \"}}\"}}' {log} > {o}")
        check = f"""
def test_counts():
    got = json.loads(text({o!r}))
    assert got == {want!r}, got
"""
        return Blueprint(files={log: "\n".join(p["lines"]) + "\n"}, solution=(solve,),
                         check=check, mutants={
                             "grep-anywhere": (solve.replace('$2=="ERROR"', "/ERROR/"),),
                             "errors-and-warnings": (solve.replace(
                                 '$2=="ERROR"', '$2=="ERROR" || $2=="WARN"'),),
                         })
