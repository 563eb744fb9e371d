"""Episode reset latency through the warm pool, side by side with a fresh `docker run`, in one run.

    .venv/bin/python bench/reset.py [--n 20] [--json]

For two tasks — an SWE task (data/eval_samples "pyclamp": reset = a warm spare, the used
sandbox restored in place with git) and a terminal task (reset = a warm spare, the used one
recreated from the image) — it runs n episodes one after another, each like a short RL
episode (reset, a write, a command, verify), and records `reset()` wall time.

Baselines, measured on the same images in the same run:
  * docker run: `docker run -d --network none IMAGE sleep infinity` then `docker exec CID true`
    (a container ready for its first action; removal not timed) — what a reset costs when it
    restarts a container, as R2E-Gym's does;
  * no pool: `Sandbox.start(...)` + its first exec, the hardened start envfactory would do per
    reset without the pool.

Target: pool p50 <= 0.15 s and >= 3x faster than docker run. Nothing here asserts on time.

Verify overhead: solved SWE episodes graded both ways, interleaved — in the agent's own
sandbox (after kill_all) and in a clean one with the agent's diff applied (the default, the
one a forged report cannot reach); target: the clean one costs < 1 s more at p50.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console
from rich.table import Table

from data import eval_samples
from envs import images
from envs.api import ApplyPatch, Environment, Shell, WriteFile
from envs.models import TerminalTask
from envs.pool import Pool
from envs.sandbox import Sandbox

TARGET_P50_S = 0.15
TARGET_RATIO = 3.0
VERIFY_OVERHEAD_TARGET_S = 1.0  # grading in a clean sandbox, over grading in the agent's


def _pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, math.ceil(q / 100 * len(ordered)) - 1))]


def _terminal_task(base: str) -> TerminalTask:
    return TerminalTask(
        task_id="bench-add", instruction="Write the sum of /app/input.txt to /app/answer.txt.",
        dockerfile=f"FROM {base}\nWORKDIR /app\nCOPY app/ /app/\n",
        files={"app/input.txt": "3 4\n"},
        solution="read a b < /app/input.txt; echo $((a + b)) > /app/answer.txt\n",
        tests={"test.sh": '[ "$(cat /app/answer.txt)" = 7 ] && echo 1 > '
                          "/logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n"})


async def _pool_resets(tasks: dict[str, Any], n: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with Pool(max_live=4, spares=2) as pool:
        for name, task in tasks.items():
            env = Environment(task, pool=pool)
            await env.reset()  # warm-up: the image is resolved and spares are started
            await pool.settle()
            times = []
            for i in range(n):
                _, info = await env.reset(seed=i)
                times.append(info["reset_s"])
                await env.step(WriteFile(path="bench.txt", content=f"{i}\n"))
                await env.step(Shell(command="cat bench.txt >/dev/null"))
                await env.verify()
            await env.close()
            out[name] = {"pool": times}
        m = pool.metrics()
        out["metrics"] = m.model_dump()
    return out


async def _verify_overhead(task: Any, n: int) -> dict[str, list[float]]:
    """verify() of a solved SWE episode, graded in the agent's own sandbox (after kill_all)
    and in a clean one with the agent's diff applied, interleaved so both see the same
    machine."""
    out: dict[str, list[float]] = {"own sandbox": [], "clean sandbox": []}
    async with Pool(max_live=4, spares=2) as pool:
        envs = {"own sandbox": Environment(task, pool=pool, fresh_grading=False),
                "clean sandbox": Environment(task, pool=pool, fresh_grading=True)}
        for env in envs.values():  # warm-up
            await env.reset()
            await env.verify()
        await pool.settle()
        for _ in range(n):
            for name, env in envs.items():
                await env.reset()
                await env.step(ApplyPatch(patch=task.patch))
                t0 = time.perf_counter()
                verdict = await env.verify()
                out[name].append(time.perf_counter() - t0)
                assert verdict.reward == 1.0, verdict.reason
        for env in envs.values():
            await env.close()
    return out


def _docker_run(image: str, n: int) -> list[float]:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        cid = subprocess.run(["docker", "run", "-d", "--network", "none", image, "sleep",
                              "infinity"], check=True, capture_output=True, text=True
                             ).stdout.strip()
        subprocess.run(["docker", "exec", cid, "true"], check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
        subprocess.run(["docker", "rm", "-f", cid], check=True, capture_output=True)
    return times


def _no_pool(image: str, workdir: str, n: int) -> list[float]:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        sb = Sandbox.start(image, workdir=workdir)
        sb.exec("true")
        times.append(time.perf_counter() - t0)
        sb.close()
    return times


def measure(n: int, console: Console) -> dict[str, Any]:
    console.log("building the sample tasks (cache hits after the first run) ...")
    swe = eval_samples.build_tasks(["pyclamp"])[0].task
    term = _terminal_task(images.ensure("base").tag)
    tasks = {"swe (restore in place)": swe, "terminal (recreate)": term}
    console.log(f"pool: {n} episodes per task ...")
    results = asyncio.run(_pool_resets(tasks, n))
    term_image = images.build_context("task-bench-add", term.dockerfile,
                                      {k: v.encode() for k, v in term.files.items()},
                                      kind="task", log=lambda _m: None)
    specs = {"swe (restore in place)": (swe.env_spec.image, swe.env_spec.workdir),
             "terminal (recreate)": (term_image, "/app")}
    cli = shutil.which("docker") is not None
    for name, (image, workdir) in specs.items():
        console.log(f"baselines for {name} ...")
        if cli:
            _docker_run(image, 1)  # warm-up
            results[name]["docker_run"] = _docker_run(image, n)
        _no_pool(image, workdir, 1)
        results[name]["no_pool"] = _no_pool(image, workdir, n)
    console.log(f"verify: {n} solved SWE episodes graded each way ...")
    results["verify"] = asyncio.run(_verify_overhead(swe, n))
    results["n"] = n
    return results


def summarize(results: dict[str, Any]) -> dict[str, Any]:
    summary: dict[str, Any] = {"n": results["n"], "metrics": results["metrics"], "tasks": {}}
    v = results.get("verify")
    if v:
        own, clean = v["own sandbox"], v["clean sandbox"]
        summary["verify"] = {
            "own_sandbox": {"p50_s": _pct(own, 50), "p95_s": _pct(own, 95)},
            "clean_sandbox": {"p50_s": _pct(clean, 50), "p95_s": _pct(clean, 95)},
            "overhead_p50_s": _pct(clean, 50) - _pct(own, 50),
            "overhead_p95_s": _pct(clean, 95) - _pct(own, 95)}
        summary["verify"]["meets_target"] = \
            summary["verify"]["overhead_p50_s"] < VERIFY_OVERHEAD_TARGET_S
    for name, row in results.items():
        if name in ("n", "metrics", "verify"):
            continue
        s = {who: {"p50_s": _pct(v, 50), "p95_s": _pct(v, 95)} for who, v in row.items()}
        for base in ("docker_run", "no_pool"):
            if base in s:
                s[f"speedup_p50_vs_{base}"] = s[base]["p50_s"] / s["pool"]["p50_s"]
                s[f"speedup_p95_vs_{base}"] = s[base]["p95_s"] / s["pool"]["p95_s"]
        ratio = s.get("speedup_p50_vs_docker_run", s["speedup_p50_vs_no_pool"])
        s["meets_target"] = s["pool"]["p50_s"] <= TARGET_P50_S and ratio >= TARGET_RATIO
        summary["tasks"][name] = s
    return summary


def render(summary: dict[str, Any], console: Console) -> None:
    table = Table(title=f"episode reset latency, n={summary['n']} per task",
                  caption="speedup = baseline / pool; target: pool p50 <= 0.15 s and "
                          ">= 3x faster than docker run")
    for col in ("task", "pool p50 / p95", "docker run p50 / p95", "no pool p50 / p95",
                "speedup vs docker run", "speedup vs no pool", "target"):
        table.add_column(col, justify="left" if col == "task" else "right", no_wrap=True)

    def ms(row: dict[str, float] | None) -> str:
        return f"{row['p50_s'] * 1000:.0f} / {row['p95_s'] * 1000:.0f} ms" if row else "n/a"

    for name, s in summary["tasks"].items():
        dr = s.get("speedup_p50_vs_docker_run")
        table.add_row(
            name, ms(s["pool"]), ms(s.get("docker_run")), ms(s.get("no_pool")),
            f"{dr:.1f}x / {s['speedup_p95_vs_docker_run']:.1f}x" if dr else "n/a",
            f"{s['speedup_p50_vs_no_pool']:.1f}x / {s['speedup_p95_vs_no_pool']:.1f}x",
            "met" if s["meets_target"] else "MISSED")
    console.print(table)
    v = summary.get("verify")
    if v:
        console.print(
            f"verify of a solved SWE episode: own sandbox {ms(v['own_sandbox'])}, clean "
            f"sandbox with the agent's diff {ms(v['clean_sandbox'])}; overhead p50 "
            f"{v['overhead_p50_s'] * 1000:.0f} ms, p95 {v['overhead_p95_s'] * 1000:.0f} ms "
            f"(target p50 < {VERIFY_OVERHEAD_TARGET_S:g} s: "
            f"{'met' if v['meets_target'] else 'MISSED'})")
    m = summary["metrics"]
    console.print(f"pool: warm hits {m['warm_hits']}, cold starts {m['cold_starts']}, restored "
                  f"in place {m['restored']}, recreated {m['recreated']}, max live "
                  f"{m['max_live']} of cap {m['cap']}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20, help="episodes (and baseline starts) per task")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = ap.parse_args(argv)
    console = Console(stderr=args.json, quiet=args.json, width=max(Console().width, 150))
    summary = summarize(measure(max(1, args.n), console))
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        render(summary, console)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
