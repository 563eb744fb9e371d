"""Cold and warm env builds of every sample repository, measured side by side in one run.

Cold: the env image is built from the language image (setup steps, commit). Warm: the same
launch again, a cache hit on the content-addressed env image. Also the disk an extra
instance (another commit, same env image) adds. Prints per-sample figures and the median
and max over samples.

    .venv/bin/python bench/build.py [--only NAME ...] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from data import samples
from envs.instance import open_instance
from repolaunch.build import launch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", help="sample names (default: all)")
    ap.add_argument("--warm", type=int, default=3, help="warm launches per sample")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    names = args.only or samples.names()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            repo = samples.write(samples.get(name), Path(tmp))
            t = time.monotonic()
            cold = launch(repo, rebuild=True, run_tests=False)
            cold_s = time.monotonic() - t
            warm = []
            for _ in range(args.warm):
                t = time.monotonic()
                w = launch(repo, run_tests=False)
                warm.append(time.monotonic() - t)
                assert w.cache_hit, f"{name}: warm launch was not a cache hit"
            disk = None
            if cold.env is not None:
                first = samples.commit_shas(repo)[0]
                try:
                    with open_instance(cold.env.model_copy(update={"checkout": first})) as sb:
                        disk = sb.disk_usage()
                except Exception:  # the first commit may predate the build files
                    disk = None
            rows.append({"sample": name, "ok": cold.ok, "failure": cold.failure,
                         "cold_s": round(cold_s, 2), "warm_s": round(statistics.median(warm), 2),
                         "instance_disk_bytes": disk})
    ok = [r for r in rows if r["ok"]]
    summary = {
        "cold_median_s": round(statistics.median(r["cold_s"] for r in ok), 2) if ok else None,
        "cold_max_s": max((r["cold_s"] for r in ok), default=None),
        "warm_median_s": round(statistics.median(r["warm_s"] for r in ok), 2) if ok else None,
        "warm_max_s": max((r["warm_s"] for r in ok), default=None),
        "instance_disk_max_bytes": max((r["instance_disk_bytes"] or 0 for r in ok), default=0),
    }
    if args.json:
        print(json.dumps({"rows": rows, "summary": summary}, indent=2))
        return
    table = Table(title="env builds per sample repository")
    for col in ("sample", "built", "cold s", "warm s", "instance disk", "failure"):
        table.add_column(col)
    for r in rows:
        disk = r["instance_disk_bytes"]
        table.add_row(r["sample"], "yes" if r["ok"] else "no", f"{r['cold_s']:.1f}",
                      f"{r['warm_s']:.2f}", "-" if disk is None else f"{disk / 1024:.1f} KiB",
                      (r["failure"] or "")[:60])
    console = Console(width=160)
    console.print(table)
    console.print(f"cold: median {summary['cold_median_s']} s, max {summary['cold_max_s']} s; "
                  f"warm: median {summary['warm_median_s']} s, max {summary['warm_max_s']} s; "
                  f"an extra instance adds at most "
                  f"{summary['instance_disk_max_bytes'] / 1024:.1f} KiB")


if __name__ == "__main__":
    main()
