"""Jobs on Celery workers, measured: throughput with 1 worker vs 2 on the same queue, side by
side in one run; 500 validation jobs over 2 workers counted from the registry; and what one
environment costs to build and keep (time, disk, RAM), extrapolated to 10,000.

    eval "$(bash envfactory/services.sh)"     # Redis and PostgreSQL on loopback
    .venv/bin/python bench/scale.py [--jobs 500] [--throughput-jobs 40] [--json]

Every job is a real validation (`repolaunch.jobs.validate_one`: the candidate's tests run in
fresh sandboxes before and after its fix, then the verified task is registered) of a mined
candidate of a bundled sample repository; the copies differ in instance id only, so each is a
job of its own. Workers are real `envfactory worker` processes (one process each), the broker
the Redis server at ENVFACTORY_BROKER_URL, the store of record a fresh PostgreSQL database on
the server at ENVFACTORY_TEST_PG_URL for each phase.

- **throughput**: the same `--throughput-jobs` jobs with 1 worker, then with 2, workers
  started (and ready) before the clock starts; jobs per minute and the ratio.
- **count**: `--jobs` jobs over 2 workers. From the registry: job rows by status and
  attempts, `validate` run records per instance (exactly one each), tasks registered.
- **cost**: per sample repository (`--cost-samples`): a cold env build (seconds), the bytes
  the env image adds to its language image, the bytes of an instance's writable layer (its
  commit checked out), the memory of a live idle sandbox; the registry's bytes per task
  (10,000 task rows written to PostgreSQL and to SQLite). Then 10,000 environments as
  figures: the env-image-per-task worst case and the shared case (one env image per
  repository and dependency set, instances checked out at start).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from data import samples  # noqa: E402
from envs.config import reset_settings_cache  # noqa: E402
from envs.models import EnvSpec, SWETask  # noqa: E402
from envs.registry import Registry  # noqa: E402

ENVFACTORY = Path(sys.executable).with_name("envfactory")
COST_SAMPLES = ("py-textkit", "go-tabular", "rust-spanfmt", "js-jest", "ts-vitest",
                "c-kvconf", "cpp-geom", "java-money", "php-money", "ruby-roman")


# --------------------------------------------------------------------------- setup


def need(var: str) -> str:
    value = os.environ.get(var)
    if not value:
        raise SystemExit(f"error: {var} is not set; run `eval \"$(bash envfactory/services.sh)\"` "
                         "first (Redis and PostgreSQL on loopback)")
    return value


def new_database(server: str, tag: str) -> str:
    """A brand-new PostgreSQL database on the server; its SQLAlchemy URL."""
    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(server)
    name = f"envfactory_bench_{tag}_{os.getpid()}_{time.monotonic_ns()}"
    admin = url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return url.set(database=name).render_as_string(hide_password=False)


def drop_database(server: str, url: str) -> None:
    import psycopg
    from sqlalchemy.engine import make_url

    admin = make_url(server).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{make_url(url).database}" WITH (FORCE)')


def candidate(sample: str, tmp: Path) -> tuple[SWETask, EnvSpec, str | None]:
    """A planted fix of the sample, mined, with the environment of its base commit."""
    from repolaunch.build import launch
    from repolaunch.mine import mine

    spec = samples.get(sample)
    repo = samples.write(spec, tmp)
    shas = samples.commit_shas(repo)
    by_base = {c.base_commit: c for c in mine(repo).candidates}
    for planted in spec.planted:
        task = by_base.get(shas[planted.commit - 1])
        if task is None or not planted.fail_to_pass:
            continue
        res = launch(repo, commit=task.base_commit, run_tests=False)
        if res.ok and res.env is not None:
            return task, res.env, res.plan.per_test_command or None
    raise SystemExit(f"error: no planted fix of {sample} built an environment")


def jobs(task: SWETask, env: EnvSpec, per_test: str | None, n: int, tag: str) -> list[Any]:
    from repolaunch.jobs import ValidateJob

    return [ValidateJob(task=task.model_copy(update={"instance_id": f"{task.instance_id}"
                                                     f"-{tag}-{k:04d}"}),
                        env=env, repo=task.repo, runs_before=1, runs_after=1, confirm_runs=1,
                        per_test_command=per_test) for k in range(n)]


class Workers:
    """`envfactory worker -c 1` processes on one database and one broker."""

    def __init__(self, db: str, broker: str, logs: Path) -> None:
        self.env = {**os.environ, "ENVFACTORY_DB_URL": db, "ENVFACTORY_BROKER_URL": broker,
                    "PYTHONPATH": str(ROOT)}
        self.logs = logs
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, n: int) -> None:
        logs = []
        for _ in range(n):
            log = self.logs / f"worker-{time.monotonic_ns()}.log"
            with open(log, "wb") as fh:
                self.procs.append(subprocess.Popen(
                    [str(ENVFACTORY), "worker", "-c", "1", "--loglevel", "INFO"],
                    env=self.env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True,
                    cwd=ROOT))
            logs.append(log)
        deadline = time.monotonic() + 120
        for proc, log in zip(self.procs[-n:], logs, strict=True):
            while b"ready." not in log.read_bytes():
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"error: a worker did not start:\n"
                                     f"{log.read_text(errors='replace')[-2000:]}")
                time.sleep(0.2)

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self.procs.clear()


def on_workers(n_workers: int, batch: list[Any], server: str, broker: str, tmp: Path,
               tag: str) -> tuple[str, float, list[Any]]:
    """Run the batch on n fresh workers over a fresh database: (db URL, seconds, outcomes)."""
    import redis

    from harness.queue import CeleryExecutor
    from repolaunch.jobs import validate_one

    redis.Redis.from_url(broker).flushdb()
    db = new_database(server, tag)
    saved = os.environ.get("ENVFACTORY_DB_URL")
    os.environ["ENVFACTORY_DB_URL"] = db
    reset_settings_cache()
    workers = Workers(db, broker, tmp)
    try:
        workers.start(n_workers)
        with Registry(db) as reg:
            t0 = time.monotonic()
            outcomes = list(CeleryExecutor(broker_url=broker, registry=reg,
                                           wait_timeout=24 * 3600).map(validate_one, batch))
            took = time.monotonic() - t0
    finally:
        workers.stop()
        # The phases after this one use the registry they were given, not this database.
        if saved is None:
            os.environ.pop("ENVFACTORY_DB_URL", None)
        else:
            os.environ["ENVFACTORY_DB_URL"] = saved
        reset_settings_cache()
    return db, took, outcomes


# --------------------------------------------------------------------------- phases


def throughput(batch_of: Any, n: int, server: str, broker: str, tmp: Path,
               log: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"jobs": n}
    for workers in (1, 2):
        log(f"throughput: {n} jobs on {workers} worker(s) ...")
        db, took, outcomes = on_workers(workers, batch_of(n, f"t{workers}"), server, broker,
                                        tmp, f"t{workers}")
        drop_database(server, db)
        out[f"workers_{workers}"] = {"seconds": round(took, 1),
                                     "jobs_per_min": round(60 * n / took, 2),
                                     "ok": sum(o.ok for o in outcomes),
                                     "verified": sum(bool(o.ok and o.value["verified"])
                                                     for o in outcomes)}
    out["ratio"] = round(out["workers_2"]["jobs_per_min"] / out["workers_1"]["jobs_per_min"], 2)
    return out


def count(batch: list[Any], server: str, broker: str, tmp: Path, log: Any) -> dict[str, Any]:
    log(f"count: {len(batch)} jobs on 2 workers ...")
    db, took, outcomes = on_workers(2, batch, server, broker, tmp, "count")
    wanted = {j.task.instance_id for j in batch}
    try:
        with Registry(db) as reg:
            rows = reg.list_jobs(kind="validate")
            runs = Counter(r.target for r in reg.list_runs(kind="validate"))
            tasks = [t.instance_id for t in reg.list_swe_tasks()]
    finally:
        drop_database(server, db)
    return {
        "jobs": len(batch), "seconds": round(took, 1), "outcomes": len(outcomes),
        "job_rows": len(rows), "job_status": dict(Counter(r.status for r in rows)),
        "job_attempts": dict(Counter(r.attempts for r in rows)),
        "run_records": sum(runs.values()), "instances_with_a_record": len(runs),
        "instances_with_two_or_more": sum(1 for c in runs.values() if c > 1),
        "lost": len(wanted - set(runs)), "tasks_registered": len(tasks),
        "tasks_distinct": len(set(tasks)),
        "verified": sum(bool(o.ok and o.value["verified"]) for o in outcomes),
    }


def _image_bytes(tag: str) -> int:
    from envs.engine import client

    return int(client().images.get(tag).attrs.get("Size") or 0)


def cost(names: list[str], server: str, tmp: Path, log: Any) -> dict[str, Any]:
    from envs.engine import client
    from envs.instance import open_instance
    from repolaunch.build import launch

    rows = []
    for name in names:
        log(f"cost: cold env build of {name} ...")
        repo = samples.write(samples.get(name), tmp / "cost")
        t0 = time.monotonic()
        res = launch(repo, rebuild=True, run_tests=False)
        cold = time.monotonic() - t0
        row: dict[str, Any] = {"sample": name, "ok": bool(res.ok and res.env), "cold_s":
                               round(cold, 1), "failure": res.failure}
        if res.ok and res.env is not None:
            env = res.env
            api = client().api
            layers = api.inspect_image(env.image)["RootFS"]["Layers"]
            # The bytes the env image adds: its size minus that of the image it was built
            # from (the layers the two share are counted once on disk).
            base = _language_image_bytes(layers)
            row["env_image_bytes"] = _image_bytes(env.image)
            row["env_added_bytes"] = max(0, row["env_image_bytes"] - base)
            first = samples.commit_shas(repo)[-2]
            with open_instance(env.model_copy(update={"checkout": first})) as sb:
                row["instance_disk_bytes"] = sb.disk_usage()
                stats = client().containers.get(sb.id).stats(stream=False)
                mem = stats.get("memory_stats") or {}
                cache = (mem.get("stats") or {}).get("inactive_file", 0)
                row["sandbox_ram_bytes"] = int(mem.get("usage", 0)) - int(cache)
        rows.append(row)
    registry = registry_bytes(server, tmp, log)
    ok = [r for r in rows if r["ok"]]

    def med(key: str) -> float:
        return statistics.median(r[key] for r in ok) if ok else 0.0

    n = 10_000
    per_task_db = registry["postgresql_bytes_per_task"]
    return {
        "rows": rows, "registry": registry,
        "median": {k: med(k) for k in ("cold_s", "env_added_bytes", "instance_disk_bytes",
                                       "sandbox_ram_bytes")},
        "ten_thousand": {
            # every task with an env image of its own (every task a new dependency set)
            "worst_build_hours_per_worker": round(n * med("cold_s") / 3600, 1),
            "worst_disk_gib": round(n * med("env_added_bytes") / 2**30, 1),
            # one env image per repository and dependency set: tasks add registry rows, and
            # an instance's checkout only while its sandbox lives
            "registry_mib": round(n * per_task_db / 2**20, 1),
            "live_instance_disk_gib_per_1k": round(1000 * med("instance_disk_bytes") / 2**30, 2),
            "ram_gib_per_1k_live_sandboxes": round(1000 * med("sandbox_ram_bytes") / 2**30, 2),
        },
    }


def _language_image_bytes(env_layers: list[str]) -> int:
    """The size of the largest other local image whose layers are a prefix of these."""
    from envs.engine import client

    best = 0
    for image in client().images.list():
        layers = image.attrs.get("RootFS", {}).get("Layers") or []
        if layers and len(layers) < len(env_layers) and env_layers[:len(layers)] == layers:
            best = max(best, int(image.attrs.get("Size") or 0))
    return best


def registry_bytes(server: str, tmp: Path, log: Any, n: int = 10_000) -> dict[str, Any]:
    """10,000 SWE task rows (a real mined task's size) in PostgreSQL and in SQLite."""
    import psycopg
    from sqlalchemy.engine import make_url

    log(f"cost: {n} task rows in the registry ...")
    repo = samples.write(samples.get("py-textkit"), tmp / "rows")
    from repolaunch.mine import mine

    proto = mine(repo).candidates[0]
    tasks = [proto.model_copy(update={"instance_id": f"{proto.instance_id}-{k:05d}"})
             for k in range(n)]
    out: dict[str, Any] = {"tasks": n}
    db = new_database(server, "rows")
    try:
        admin = make_url(db).set(drivername="postgresql").render_as_string(hide_password=False)
        with psycopg.connect(admin) as conn:
            empty = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
        with Registry(db) as reg:
            t0 = time.monotonic()
            for task in tasks:
                reg.put_swe_task(task)
            out["postgresql_s"] = round(time.monotonic() - t0, 1)
        with psycopg.connect(admin) as conn:
            full = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
        out["postgresql_bytes_per_task"] = round((full - empty) / n)
    finally:
        drop_database(server, db)
    path = tmp / "rows.sqlite"
    with Registry(f"sqlite:///{path}") as reg:
        empty = path.stat().st_size
        for task in tasks:
            reg.put_swe_task(task)
    out["sqlite_bytes_per_task"] = round((path.stat().st_size - empty) / n)
    return out


# --------------------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=500, help="jobs of the count phase (0: skip)")
    ap.add_argument("--throughput-jobs", type=int, default=40,
                    help="jobs per run of the throughput phase (0: skip)")
    ap.add_argument("--sample", default="py-textkit", help="the sample whose candidate is "
                    "validated")
    ap.add_argument("--cost-samples", default=",".join(COST_SAMPLES),
                    help="samples built cold for the cost phase ('' to skip)")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    args = ap.parse_args()
    server, broker = need("ENVFACTORY_TEST_PG_URL"), need("ENVFACTORY_BROKER_URL")
    console = Console(stderr=True)
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="envfactory-bench-scale-") as tmp_:
        tmp = Path(tmp_)
        if args.jobs or args.throughput_jobs:
            task, env, per_test = candidate(args.sample, tmp)

            def batch_of(n: int, tag: str) -> list[Any]:
                return jobs(task, env, per_test, n, tag)

            if args.throughput_jobs:
                result["throughput"] = throughput(batch_of, args.throughput_jobs, server,
                                                  broker, tmp, console.log)
                console.log(f"throughput: {json.dumps(result['throughput'])}")
            if args.jobs:
                result["count"] = count(batch_of(args.jobs, "c"), server, broker, tmp,
                                        console.log)
                console.log(f"count: {json.dumps(result['count'])}")  # kept if a later phase fails
        names = [n for n in args.cost_samples.split(",") if n]
        if names:
            result["cost"] = cost(names, server, tmp, console.log)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    report(result)


def report(result: dict[str, Any]) -> None:
    console = Console(width=150)
    if "throughput" in result:
        t = result["throughput"]
        table = Table(title=f"throughput: {t['jobs']} validation jobs, same queue")
        for col in ("workers", "seconds", "jobs/min", "ok", "verified"):
            table.add_column(col, justify="right")
        for w in (1, 2):
            r = t[f"workers_{w}"]
            table.add_row(str(w), str(r["seconds"]), str(r["jobs_per_min"]), str(r["ok"]),
                          str(r["verified"]))
        console.print(table)
        console.print(f"2 workers / 1 worker: {t['ratio']}x")
    if "count" in result:
        c = result["count"]
        console.print(f"count: {c['jobs']} jobs in {c['seconds']} s; job rows {c['job_rows']} "
                      f"{c['job_status']}, attempts {c['job_attempts']}; validate records "
                      f"{c['run_records']} over {c['instances_with_a_record']} instances "
                      f"(lost {c['lost']}, duplicated {c['instances_with_two_or_more']}); "
                      f"tasks registered {c['tasks_registered']} ({c['tasks_distinct']} "
                      f"distinct, verified {c['verified']})")
    if "cost" in result:
        c = result["cost"]
        table = Table(title="per environment")
        for col in ("sample", "cold build s", "env image adds", "instance layer",
                    "live sandbox RAM", "failure"):
            table.add_column(col)
        for r in c["rows"]:
            table.add_row(r["sample"], str(r["cold_s"]),
                          _mib(r.get("env_added_bytes")), _mib(r.get("instance_disk_bytes")),
                          _mib(r.get("sandbox_ram_bytes")), (r.get("failure") or "")[:50])
        console.print(table)
        console.print(f"registry: {c['registry']}")
        console.print(f"10,000 environments: {c['ten_thousand']}")


def _mib(v: Any) -> str:
    return "-" if v is None else f"{v / 2**20:.1f} MiB"


if __name__ == "__main__":
    main()
