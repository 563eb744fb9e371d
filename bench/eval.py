"""What `envfactory eval` costs per prediction beyond the bare test command.

Side by side in one run, for each sample task: the bare test command in an already running
container (patches applied beforehand) vs. a whole evaluation of the gold patch (fresh
sandbox, patch, test patch, run, read report, parse, grade, close). Prints the absolute
overhead (median, and p50 / p95 over interleaved pairs of runs: the one verifier's cost on top of the
test command), the ratio, and which step costs the most. A `-slow` variant of the Python task
runs a suite of about 10 s, where the ratio target (<= 1.15) applies.

    .venv/bin/python bench/eval.py [--n 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from data import eval_samples
from envs.models import SWETask
from envs.sandbox import Sandbox
from envs.verify import DETERMINISM_ENV
from harness.evaluate import EvalJob, Prediction, evaluate_one

SLOW_PREFIX = "python3 -c 'import time; t=time.time()\nwhile time.time()-t<10: sum(range(9999))'; "


def slow_variant(task: SWETask) -> SWETask:
    spec = task.env_spec
    assert spec is not None
    slow = spec.model_copy(update={"test_command": SLOW_PREFIX + spec.test_command})
    return task.model_copy(update={"instance_id": task.instance_id + "-slow", "env_spec": slow})


def bare_runs(task: SWETask, n: int) -> list[float]:
    spec = task.env_spec
    assert spec is not None and spec.image
    with Sandbox.start(spec.image, limits=spec.limits, workdir=spec.workdir,
                       env=DETERMINISM_ENV) as sb:
        for patch in (task.test_patch, task.patch):
            assert sb.apply_patch(patch).applied
        sb.exec(spec.test_command)  # warm the page cache and any build cache once
        times = []
        for _ in range(n):
            t = time.monotonic()
            sb.exec(spec.test_command)
            times.append(time.monotonic() - t)
    return times


def eval_runs(task: SWETask, n: int) -> tuple[list[float], list[dict[str, float]]]:
    pred = Prediction(instance_id=task.instance_id, model_name_or_path="gold",
                      model_patch=task.patch)
    totals, steps = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(n):
            job = EvalJob(task_json=task.model_dump_json(), prediction_json=pred.model_dump_json(),
                          out_dir=str(Path(tmp) / str(i)))
            t = time.monotonic()
            report = evaluate_one(job)
            totals.append(time.monotonic() - t)
            assert report["resolved"], report["reason"]
            steps.append(report["timings"])
    return totals, steps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5, help="runs of each side per task")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    tasks = [b.task for b in eval_samples.build_tasks()]
    tasks.append(slow_variant(tasks[0]))
    rows = []
    for task in tasks:
        # Interleave the two sides so that machine noise hits both alike.
        bare, total, steps = [], [], []
        for _ in range(args.n):
            bare += bare_runs(task, 1)
            t, s = eval_runs(task, 1)
            total += t
            steps += s
        b, e = statistics.median(bare), statistics.median(total)
        # the verifier's cost on top of the test command, per interleaved pair of runs
        over = sorted(t - x for t, x in zip(total, bare, strict=True))
        p95 = over[max(0, math.ceil(0.95 * len(over)) - 1)]
        step_names = [k for k in steps[0] if k not in ("total", "run")]
        step_med = {k: statistics.median(s.get(k, 0.0) for s in steps) for k in step_names}
        step_med["close+other"] = max(0.0, e - statistics.median(s["total"] for s in steps))
        costliest = max(step_med, key=lambda k: step_med[k])
        rows.append({"task": task.instance_id, "bare_s": round(b, 3), "eval_s": round(e, 3),
                     "overhead_s": round(e - b, 3), "ratio": round(e / b, 3),
                     "overhead_p50_s": round(statistics.median(over), 3),
                     "overhead_p95_s": round(p95, 3),
                     "costliest_step": costliest,
                     "steps_s": {k: round(v, 3) for k, v in step_med.items()}})
    if args.json:
        print(json.dumps({"n": args.n, "rows": rows}, indent=2))
        return
    table = Table(title=f"envfactory eval vs the bare test command (median of {args.n})")
    for col in ("task", "bare s", "eval s", "overhead s", "overhead p50 / p95 s", "ratio",
                "costliest step", "steps"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["task"], f"{r['bare_s']:.2f}", f"{r['eval_s']:.2f}",
                      f"{r['overhead_s']:.2f}",
                      f"{r['overhead_p50_s']:.2f} / {r['overhead_p95_s']:.2f}",
                      f"{r['ratio']:.2f}", r["costliest_step"],
                      " ".join(f"{k}={v:.2f}" for k, v in r["steps_s"].items()))
    Console(width=200).print(table)


if __name__ == "__main__":
    main()
