"""Remote episodes through `envfactory serve` against the same episodes run locally, in one run.

    PYTHONPATH=. python bench/serve.py [--n 64] [--max-live 16] [--json]

Starts `python -m harness.serve_cli` as a separate process (its own registry holding the two
tasks), then runs n concurrent episodes twice with the same pool cap: locally (envs.api on a
Pool in this process) and remotely (envs.make(task_id, remote=URL), one OpenEnv WebSocket
session each). Tasks alternate between an SWE task (data/eval_samples "pyclamp") and a small
terminal task; half of each are solved with the reference solution, half submit nothing.
Each episode: reset, `cat` of a file, the solution (when solving), submit, verify.

Reports: episodes lost (raised, or verified with reward None), whether every remote reward
equals the local one of the same episode, and reset and step latency, local vs remote side by
side (median, p90). With n above the cap, resets wait for a slot in both runs (the server's
queue, the pool's wait), so reset latency includes that wait; step latency does not.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

import envs  # noqa: E402
from data import eval_samples  # noqa: E402
from envs import images  # noqa: E402
from envs.actions import ApplyPatch, Shell, Submit  # noqa: E402
from envs.api import Environment, Task  # noqa: E402
from envs.models import SWETask, TerminalTask  # noqa: E402
from envs.pool import Pool, percentile  # noqa: E402

TOKEN = "bench-serve-token"
ADD_TESTS = {"test.sh": 'if [ "$(cat /app/answer.txt 2>/dev/null)" = 7 ]; '
                        "then echo 1 > /logs/verifier/reward.txt; "
                        "else echo 0 > /logs/verifier/reward.txt; fi\n"}


def terminal_task(base: str) -> TerminalTask:
    return TerminalTask(
        task_id="bench-serve-add", instruction="Write the sum of the two numbers in "
                                               "/app/input.txt to /app/answer.txt.",
        dockerfile=f"FROM {base}\nWORKDIR /app\nCOPY app/ /app/\n", files={"app/input.txt": "3 4\n"},
        solution="read a b < /app/input.txt\necho $((a + b)) > /app/answer.txt\n",
        tests=ADD_TESTS, family="add", difficulty="easy", verifier_timeout_sec=30)


def plan(n: int, tasks: list[Task]) -> list[tuple[Task, bool]]:
    """Episode i: task i % 2, solved when (i // 2) is even."""
    return [(tasks[i % len(tasks)], (i // 2) % 2 == 0) for i in range(n)]


async def episode(env: Any, task: Task, solve: bool, i: int) -> dict[str, Any]:
    out: dict[str, Any] = {"i": i, "task": getattr(task, "instance_id", None) or
                           getattr(task, "task_id", ""), "solve": solve, "steps_s": []}
    try:
        t0 = time.monotonic()
        await env.reset(seed=i, rollout_id=f"ep-{i}")
        out["reset_s"] = time.monotonic() - t0
        swe = isinstance(task, SWETask)
        actions: list[Any] = [Shell(command="ls")]
        if solve:
            actions.append(ApplyPatch(patch=task.patch) if swe else Shell(command=task.solution))
        actions.append(Submit())
        for act in actions:
            t = time.monotonic()
            await env.step(act)
            out["steps_s"].append(time.monotonic() - t)
        t = time.monotonic()
        verdict = await env.verify()
        out["verify_s"] = time.monotonic() - t
        out["reward"], out["failure"] = verdict.reward, verdict.failure.value
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        await env.close()
    return out


async def run_local(episodes: list[tuple[Task, bool]], max_live: int) -> tuple[list, float]:
    async with Pool(max_live=max_live) as pool:
        t0 = time.monotonic()
        res = await asyncio.gather(*[episode(Environment(t, pool=pool), t, s, i)
                                     for i, (t, s) in enumerate(episodes)])
        return res, time.monotonic() - t0


async def run_remote(episodes: list[tuple[Task, bool]], url: str) -> tuple[list, float]:
    t0 = time.monotonic()
    res = await asyncio.gather(*[
        episode(envs.make(getattr(t, "instance_id", None) or t.task_id, remote=url,
                          token=TOKEN), t, s, i) for i, (t, s) in enumerate(episodes)])
    return res, time.monotonic() - t0


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0


def start_server(tasks: list[Task], n: int, max_live: int, home: Path) -> tuple[Any, str]:
    from envs.registry import Registry

    db = f"sqlite:///{home / 'registry.sqlite'}"
    with Registry(db) as reg:
        for t in tasks:
            (reg.put_swe_task if isinstance(t, SWETask) else reg.put_terminal_task)(t)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "ENVFACTORY_DB_URL": db, "ENVFACTORY_SERVE_TOKEN": TOKEN,
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    log = open(home / "server.log", "w")  # noqa: SIM115 (open for the process's life)
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.serve_cli", "--port", str(port), "--max-live",
         str(max_live), "--per-client", str(n), "--max-waiting", str(n),
         "--queue-timeout", "1800"], cwd=ROOT, env=env, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while _get(f"{url}/health") != 200:
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise SystemExit(f"the server did not start:\n{(home / 'server.log').read_text()}")
        time.sleep(0.3)
    return proc, url


def stats(values: list[float]) -> tuple[float | None, float | None]:
    return percentile(values, 50), percentile(values, 90)


def summarize(name: str, res: list[dict[str, Any]], took: float) -> dict[str, Any]:
    ok = [r for r in res if "error" not in r and r.get("reward") is not None]
    resets = [r["reset_s"] for r in res if "reset_s" in r]
    steps = [s for r in res for s in r["steps_s"]]
    verifies = [r["verify_s"] for r in res if "verify_s" in r]
    return {"run": name, "episodes": len(res), "lost": len(res) - len(ok), "wall_s": took,
            "reset": stats(resets), "step": stats(steps), "verify": stats(verifies),
            "errors": [r["error"] for r in res if "error" in r][:5]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=64, help="concurrent episodes per run")
    ap.add_argument("--max-live", type=int, default=16, help="sandbox cap (both runs)")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = ap.parse_args()

    tasks: list[Task] = [eval_samples.build_tasks(["pyclamp"])[0].task,
                         terminal_task(images.ensure("base").tag)]
    episodes = plan(args.n, tasks)
    with tempfile.TemporaryDirectory(prefix="envfactory-bench-serve-") as tmp:
        proc, url = start_server(tasks, args.n, args.max_live, Path(tmp))
        try:
            local, local_s = asyncio.run(run_local(episodes, args.max_live))
            remote, remote_s = asyncio.run(run_remote(episodes, url))
        finally:
            proc.send_signal(signal.SIGTERM)  # closes the server's pool and its sandboxes
            proc.wait(timeout=120)

    mismatched = [(a["i"], a.get("reward"), b.get("reward"))
                  for a, b in zip(local, remote, strict=True) if a.get("reward") != b.get("reward")]
    expected = [1.0 if s else 0.0 for _, s in episodes]
    summary = {"n": args.n, "max_live": args.max_live,
               "local": summarize("local", local, local_s),
               "remote": summarize("remote", remote, remote_s),
               "rewards_equal": not mismatched, "mismatched": mismatched[:10],
               "rewards_as_expected": [r.get("reward") for r in local] == expected}
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    lo, re = summary["local"], summary["remote"]

    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v * 1000:.0f} ms"

    table = Table(title=f"{args.n} concurrent episodes, pool cap {args.max_live}: "
                        "local vs remote (envfactory serve)")
    for col in ("", "local median", "local p90", "remote median", "remote p90"):
        table.add_column(col, justify="right")
    for key in ("reset", "step", "verify"):
        table.add_row(key, ms(lo[key][0]), ms(lo[key][1]), ms(re[key][0]), ms(re[key][1]))
    console = Console()
    console.print(table)
    console.print(f"wall: local {lo['wall_s']:.1f}s, remote {re['wall_s']:.1f}s; lost: local "
                  f"{lo['lost']}, remote {re['lost']}; remote rewards equal local: "
                  f"{summary['rewards_equal']} (oracle 1 / nothing 0 as expected: "
                  f"{summary['rewards_as_expected']})")
    for err in lo["errors"] + re["errors"]:
        console.print(f"[red]{err}[/red]")


if __name__ == "__main__":
    main()
