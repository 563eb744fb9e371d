"""Start a long-running worker in the background with the right arguments."""

from __future__ import annotations

import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.families._kit import WORDS
from synth.spec import Blueprint

WORKER = '''#!/usr/bin/env python3
"""A tiny worker: writes its pid, then a heartbeat file every interval."""
import argparse, os, time
ap = argparse.ArgumentParser()
ap.add_argument("--name", required=True)
ap.add_argument("--interval", type=float, default=0.5)
args = ap.parse_args()
run = "/app/run"
os.makedirs(run, exist_ok=True)
with open(f"{run}/{args.name}.pid", "w") as fh:
    fh.write(str(os.getpid()))
beat = f"{run}/{args.name}.beat"
while True:
    # Written aside and renamed: a reader never sees a half-written heartbeat.
    with open(beat + ".tmp", "w") as fh:
        fh.write(str(time.time()))
    os.replace(beat + ".tmp", beat)
    time.sleep(args.interval)
'''


@family("service-start", category="process-management", difficulty=Difficulty.MEDIUM)
class ServiceStart(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        return {"name": f"{rng.choice(WORDS)}-{rng.randint(1, 99)}",
                "interval": rng.choice([0.2, 0.3, 0.4]), "script": "/app/worker.py"}

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        n, i, s = p["name"], p["interval"], p["script"]
        return [
            f"Start the worker {s} as a background service named `{n}` with a heartbeat "
            f"interval of {i} seconds (see its --help). It must keep running after your "
            f"shell session ends.",
            f"Launch {s} so that it runs detached in the background, with --name {n} and "
            f"--interval {i}, and stays alive after you log out.",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        n, i, s = p["name"], p["interval"], p["script"]
        solve = f"nohup setsid python3 {s} --name {n} --interval {i} >/dev/null 2>&1 < /dev/null &\nsleep 1"
        check = f"""
import time


def test_running():
    pid = int(text("/app/run/{n}.pid").strip())
    os.kill(pid, 0)
    args = Path(f"/proc/{{pid}}/cmdline").read_bytes().split(b"\\0")
    assert b"--name" in args and args[args.index(b"--name") + 1] == {n!r}.encode(), args
    assert b"--interval" in args and float(args[args.index(b"--interval") + 1]) == {i!r}, args


def test_heartbeat_fresh():
    time.sleep(1.0)
    beat = float(text("/app/run/{n}.beat"))
    assert time.time() - beat < 3.0, time.time() - beat
"""
        return Blueprint(files={s: WORKER}, executables=(s,), solution=(solve,), check=check,
                         mutants={
                             "dies-with-shell": (f"timeout 0.8 python3 {s} --name {n} "
                                                 f"--interval {i} >/dev/null 2>&1 || true",),
                             "default-interval": (solve.replace(f" --interval {i}", ""),),
                         })
