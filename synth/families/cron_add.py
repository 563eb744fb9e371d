"""Add a job to a crontab file, keeping the others."""

from __future__ import annotations

import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.families._kit import WORDS
from synth.spec import Blueprint

DAYS = {"weekdays (Monday to Friday)": "1-5", "Sundays": "0", "Mondays": "1",
        "Saturdays and Sundays": "0,6"}


@family("cron-add-job", category="config-editing", difficulty=Difficulty.EASY)
class CronAdd(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        existing = [f"{rng.randint(0, 59)} {rng.randint(0, 23)} * * * /app/bin/{w}.sh"
                    for w in rng.sample(WORDS, 3)]
        return {"crontab": "/app/crontab", "existing": existing, "hour": rng.randint(13, 23),
                "minute": rng.randint(1, 59), "days": rng.choice(sorted(DAYS)),
                "job": f"/app/bin/{rng.choice(['backup', 'report', 'sync'])}.sh"}

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        c, h, m, d, j = p["crontab"], p["hour"], p["minute"], p["days"], p["job"]
        return [
            f"{c} is a crontab in the standard five-field format. Add an entry that runs "
            f"{j} at {h:02d}:{m:02d} on {d}. Keep every existing line (comments included).",
            f"Schedule {j} in the crontab file {c}: it must run at minute {m} of hour {h} "
            f"on {d} only. Existing entries and comments must stay.",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        c, h, m, d, j = p["crontab"], p["hour"], p["minute"], p["days"], p["job"]
        dow = DAYS[d]
        content = "# m h dom mon dow command\nSHELL=/bin/bash\n" + "\n".join(p["existing"]) + "\n"
        check = f"""
def _dow(field):
    names = {{"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6, "7": 0}}
    out = set()
    for part in field.lower().split(","):
        lo, _, hi = part.partition("-")
        lo, hi = names.get(lo, lo), names.get(hi, hi) if hi else None
        lo = int(lo)
        out.update(range(lo, int(hi) + 1) if hi is not None else [lo])
    return {{0 if x == 7 else x for x in out}}


def test_existing_kept():
    lines = text({c!r}).splitlines()
    for ln in {content.splitlines()!r}:
        assert ln in lines, ln


def test_new_job():
    jobs = [ln.split(None, 5) for ln in text({c!r}).splitlines()
            if ln.strip() and not ln.startswith("#") and {j!r} in ln]
    assert len(jobs) == 1, jobs
    mi, ho, dom, mon, dow, cmd = jobs[0]
    assert int(mi) == {m} and int(ho) == {h}, (mi, ho)
    assert dom == "*" and mon == "*", (dom, mon)
    assert _dow(dow) == _dow({dow!r}), dow
    assert cmd.split()[0] == {j!r}, cmd
"""
        line = f"{m} {h} * * {dow} {j}"
        return Blueprint(files={c: content}, solution=(f"echo '{line}' >> {c}",), check=check,
                         mutants={
                             "hour-minute-swapped": (f"echo '{h} {m} * * {dow} {j}' >> {c}",),
                             "replaced-file": (f"echo '{line}' > {c}",),
                         })
