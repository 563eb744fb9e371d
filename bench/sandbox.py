"""Sandbox latency, side by side with the docker CLI, in one run.

    .venv/bin/python bench/sandbox.py [--n 20] [--json]

Measures on the base image:
  * start -> first exec: `Sandbox.start(...)` + `exec("true")` vs `docker run --rm IMAGE true`
  * exec overhead: `Sandbox.exec("true")` vs `docker exec CID true` (same container)
  * no-op rebuild of the base images: the second of two `envs.images.ensure_all()` calls
    (target <= 2 s)

Prints ratios (envfactory / CLI); nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import inspect
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console
from rich.table import Table

from envs import images
from envs.sandbox import Sandbox

REBUILD_TARGET_S = 2.0


def _pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[k]


def _time(fn: Callable[[], Any], n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def _cli(*args: str) -> Callable[[], None]:
    def run() -> None:
        subprocess.run(["docker", *args], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    return run


def _quiet_kwargs(fn: Callable[..., Any]) -> dict[str, Any]:
    return {"log": lambda *_a, **_k: None} if "log" in inspect.signature(fn).parameters else {}


def measure(n: int, console: Console) -> dict[str, Any]:
    image = images.ensure("base").tag
    cli = shutil.which("docker") is not None
    results: dict[str, Any] = {"image": image, "n": n, "docker_cli": cli}

    def start_first_exec() -> None:
        with Sandbox.start(image) as s:
            s.exec("true")

    # The close is inside the timing for both: `docker run --rm` removes its container too.
    console.log("start -> first exec ...")
    start_first_exec()  # warm-up
    results["start"] = {"envfactory": _time(start_first_exec, n)}
    if cli:
        _cli("run", "--rm", image, "true")()
        results["start"]["docker"] = _time(_cli("run", "--rm", image, "true"), n)

    console.log("exec overhead ...")
    with Sandbox.start(image) as s:
        s.exec("true")
        results["exec"] = {"envfactory": _time(lambda: s.exec("true"), n)}
        if cli:
            _cli("exec", s.id, "true")()
            results["exec"]["docker"] = _time(_cli("exec", s.id, "true"), n)

    ensure_all = getattr(images, "ensure_all", None)
    if ensure_all is None:
        results["rebuild"] = {"error": "envs.images.ensure_all does not exist yet"}
    else:
        console.log("no-op rebuild (ensure_all twice) ...")
        kwargs = _quiet_kwargs(ensure_all)
        t0 = time.perf_counter()
        ensure_all(**kwargs)
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        ensure_all(**kwargs)
        results["rebuild"] = {"first_s": first, "second_s": time.perf_counter() - t0,
                              "target_s": REBUILD_TARGET_S}
    return results


def summarize(results: dict[str, Any]) -> dict[str, Any]:
    summary: dict[str, Any] = {"image": results["image"], "n": results["n"]}
    for key in ("start", "exec"):
        row: dict[str, Any] = {}
        for who, values in results[key].items():
            row[who] = {"p50_ms": _pct(values, 50) * 1000, "p95_ms": _pct(values, 95) * 1000}
        if "docker" in row:
            row["ratio_p50"] = row["envfactory"]["p50_ms"] / row["docker"]["p50_ms"]
            row["ratio_p95"] = row["envfactory"]["p95_ms"] / row["docker"]["p95_ms"]
        summary[key] = row
    summary["rebuild"] = results["rebuild"]
    return summary


def render(summary: dict[str, Any], console: Console) -> None:
    table = Table(
        title=f"sandbox bench: {summary['image']}, n={summary['n']}",
        caption="baselines: start = `docker run --rm IMAGE true`, exec = `docker exec CID true`;"
                " ratio = envfactory / docker CLI",
    )
    for col in ("measure (p50 / p95)", "envfactory", "docker CLI", "ratio"):
        table.add_column(col, justify="left" if col.startswith("measure") else "right", no_wrap=True)
    for key, label in (("start", "start→first exec"), ("exec", "exec true")):
        row = summary[key]
        ours, theirs = row["envfactory"], row.get("docker")
        table.add_row(
            label,
            f"{ours['p50_ms']:.0f} / {ours['p95_ms']:.0f} ms",
            f"{theirs['p50_ms']:.0f} / {theirs['p95_ms']:.0f} ms" if theirs else "n/a",
            f"{row['ratio_p50']:.2f}x / {row['ratio_p95']:.2f}x" if theirs else "n/a",
        )
    console.print(table)
    rb = summary["rebuild"]
    if "error" in rb:
        console.print(f"no-op rebuild of the base images: skipped ({rb['error']})")
    else:
        verdict = "within" if rb["second_s"] <= rb["target_s"] else "OVER"
        console.print(f"no-op rebuild (second ensure_all): {rb['second_s']:.2f} s, {verdict} "
                      f"the {rb['target_s']:.0f} s target (first call {rb['first_s']:.2f} s)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20, help="repetitions per measure")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = ap.parse_args(argv)
    console = Console(stderr=args.json, quiet=args.json)
    summary = summarize(measure(max(1, args.n), console))
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        render(summary, console)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
