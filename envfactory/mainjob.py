"""`envfactory run`, the main job on the embedded defaults (README command 1): the engine and
the toolchain images, every bundled sample launched, mined, validated into verified tasks and
registered, gold and empty patches evaluated on them, one synthesized task per family."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table

from envfactory.envs_cli import human_size, record_images
from envs.clikit import command, emit_json, err, logger, out
from envs.config import get_settings
from envs.errors import EnvfactoryError


@command
def run(
    suite: Optional[str] = typer.Option(None, help="Debian suite of the images"),
    samples_too: bool = typer.Option(True, "--samples/--no-samples",
                                     help="also launch every bundled sample repository"),
    mine_too: bool = typer.Option(True, "--mine/--no-mine",
                                  help="also mine and validate every sample into verified "
                                  "tasks, then evaluate gold and empty patches on them"),
    only: Optional[list[str]] = typer.Option(None, "--sample", "-s",
                                             help="only these samples (default: all)"),
    workers: Optional[int] = typer.Option(None, "--workers", "-w", min=1,
                                          help="samples mined and validated at a time "
                                          "(default: ENVFACTORY_WORKERS)"),
    synth_n: Optional[int] = typer.Option(None, "--synth", min=0,
                                          help="terminal tasks to synthesize and verify "
                                          "(default: one per task family; 0: none)"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """The main job on the embedded defaults: engine, base images, the sample repositories
    launched, mined, validated into verified tasks and registered, gold/empty evaluated."""
    from data import samples as sample_mod
    from envs import engine, images
    from envs.models import Language

    # The checks that cost nothing come first: a bad name fails before any engine work.
    names = list(only or sample_mod.names())
    for n in names:
        sample_mod.get(n)  # an unknown name fails here, listing the known ones
    images.check_suite(suite)
    workers = workers or get_settings().workers
    log = logger(as_json)
    start = time.monotonic()
    engine.ensure_engine(log=log)
    records = {r.tag: r for r in images.ensure_all(suite=suite, log=log)}
    record_images(list(records.values()))
    # The tools that matter for each language, of its family image's probes.
    tools = {"c": ("gcc", "make", "cmake"), "cpp": ("g++", "cmake", "ninja", "gtest"),
             "javascript": ("node", "npm"), "typescript": ("node", "tsc")}
    rows = []
    for lang in Language:
        p = images.plan(images.image_for(lang), suite=suite)
        r = records[p.tag]
        wanted = tools.get(lang.value)
        versions = {k: v for k, v in r.versions.items() if wanted is None or k in wanted}
        rows.append({"language": lang.value, "image": p.tag, "size_bytes": r.size_bytes,
                     "versions": versions})
    image_seconds = round(time.monotonic() - start, 1)
    launched = _launch_samples(log, as_json, names) if samples_too else []
    launch_seconds = round(time.monotonic() - start, 1)
    mined = _mine_samples(log, as_json, names, workers) if samples_too and mine_too else None
    synth_report = _synth_small(synth_n, as_json)
    seconds = round(time.monotonic() - start, 1)
    failed = [x for x in launched if not x["ok"]]
    if as_json:
        emit_json({"seconds": seconds, "languages": rows, "samples": launched,
                    "mining": mined,
                    "synth": synth_report.summary() if synth_report else None})
    else:
        table = Table(title=f"envfactory: nine-language toolchain images ({image_seconds}s)")
        for col in ("language", "image", "toolchain", "size"):
            table.add_column(col)
        for row in rows:
            table.add_row(row["language"], row["image"],
                          ", ".join(f"{k} {v}" for k, v in row["versions"].items()),
                          human_size(row["size_bytes"]))
        out.print(table)
        if launched:
            table = Table(title=f"sample repositories launched "
                          f"({launch_seconds - image_seconds:.0f}s): "
                          f"{len(launched) - len(failed)}/{len(launched)} built and tested")
            for col in ("sample", "language", "build system", "framework", "built", "tests",
                        "passed", "failed", "skipped", "as planted", "cache", "s"):
                table.add_column(col)
            for x in launched:
                c = x["counts"]
                table.add_row(x["sample"], x["language"], x["build_system"], x["framework"],
                              "yes" if x["ok"] else f"no: {x['failure']}"[:50],
                              str(c.get("total", 0)), str(c.get("passed", 0)),
                              str(c.get("failed", 0) + c.get("error", 0)),
                              str(c.get("skipped", 0)), "yes" if x["as_planted"] else "NO",
                              "hit" if x["cache_hit"] else "built", f"{x['seconds']:.0f}")
            out.print(table)
        if mined:
            _print_mining(mined)
        if synth_report is not None:
            from synth.cli import yield_tables

            for t in yield_tables(synth_report):
                out.print(t)
    if failed or any(not x["as_planted"] for x in launched):
        raise EnvfactoryError(f"{len(failed)} sample(s) did not build, "
                         f"{sum(not x['as_planted'] for x in launched)} not as planted")
    if synth_report is not None and synth_report.verified < len(synth_report.outcomes):
        gates = ", ".join(f"{k} {v}" for k, v in sorted(synth_report.gates().items()))
        raise EnvfactoryError(f"synthesized tasks failed verification: {gates}")
    if mined and not mined["ok"]:
        bad = [f"{x['sample']}: {x['problems'][0]}" for x in mined["samples"] if x["problems"]]
        raise EnvfactoryError(
            f"mining not as planted: {'; '.join(bad) or mined['eval']}"[:400])


def _launch_samples(log: Callable[[str], None], as_json: bool, names: list[str]
                    ) -> list[dict[str, Any]]:
    import tempfile

    from data import samples
    from repolaunch.build import launch as do_launch

    rows = []
    with tempfile.TemporaryDirectory(prefix="envfactory-samples-") as tmp:
        for name in names:
            sample = samples.get(name)
            repo = samples.write(sample, Path(tmp))
            with (err if as_json else out).status(f"launching sample {name} ..."):
                r = do_launch(repo, log=log)
            got = {t.test_id: t.status for t in r.results}
            rows.append({"sample": name, "language": sample.language.value,
                         "build_system": r.detection.build_system,
                         "framework": r.plan.test_framework, "ok": r.ok, "failure": r.failure,
                         "counts": r.counts, "as_planted": got == sample.expected,
                         "cache_hit": r.cache_hit, "seconds": r.seconds,
                         "image": r.env.image if r.env else None})
    return rows


def _mine_samples(log: Callable[[str], None], as_json: bool, names: list[str],
                  workers: int = 2) -> dict[str, Any]:
    """Every sample mined -> built -> validated -> registered, judged against what the
    generator planted; then gold patches must resolve every verified task, empty ones none."""
    import tempfile
    from concurrent.futures import ThreadPoolExecutor

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from data import samples
    from data.samples.check import check_pipeline, planted_counts
    from envs.registry import Registry
    from harness.evaluate import evaluate
    from repolaunch.pipeline import mine_and_validate

    rows: list[dict[str, Any]] = []
    verified: list[str] = []
    t0 = time.monotonic()
    console = err if as_json else out
    with tempfile.TemporaryDirectory(prefix="envfactory-mine-") as tmp, Registry() as reg, \
            Progress("[progress.description]{task.description}", BarColumn(),
                     MofNCompleteColumn(), TimeElapsedColumn(), console=console,
                     transient=as_json) as bar:
        tid = bar.add_task("mining samples", total=len(names))

        def one(name: str) -> dict[str, Any]:
            sample = samples.get(name)
            repo = samples.write(sample, Path(tmp))
            with Registry() as own:  # one registry handle per thread
                # per-run lines are for the registry's records, not the screen
                report = mine_and_validate(
                    repo, registry=own, log=lambda m: None if m.startswith("  ") else log(m))
            problems = check_pipeline(sample, repo, report)
            fixes, decoys = planted_counts(sample)
            bar.console.log(f"{name}: {report.verified} verified, "
                            f"{'as planted' if not problems else problems[0]}", highlight=False)
            bar.advance(tid)
            return {"sample": name, "language": sample.language.value,
                    "commits": report.mined_commits, "candidates": report.candidates,
                    "rejected_at_mining": report.rejected_at_mining,
                    "validated": report.validated,
                    "rejected_at_validation": report.rejected_at_validation,
                    "verified": report.verified, "verified_ids": report.verified_ids,
                    "planted_fixes": fixes, "planted_decoys": decoys, "problems": problems,
                    "seconds": report.seconds}

        # Two samples at a time: a validation run mostly waits on container starts and
        # test start-up, so two overlap well even on two cores.
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            rows = list(pool.map(one, names))
        for r in rows:
            verified += r["verified_ids"]
        bar.update(tid, description="gold and empty patches")
        tasks = {t.instance_id: t for t in reg.list_swe_tasks() if t.instance_id in verified}
        ev: dict[str, Any] = {"tasks": len(tasks)}
        if tasks:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            gold = evaluate("gold", tasks=tasks, run_id=f"main-gold-{stamp}", workers=2)
            empty = evaluate("empty", tasks=tasks, run_id=f"main-empty-{stamp}", workers=2)
            ev.update(gold_resolved=gold.resolved_instances, empty_resolved=
                      empty.resolved_instances, gold_rate=gold.resolved_rate,
                      empty_rate=empty.resolved_rate,
                      infra_errors=gold.error_instances + empty.error_instances)
    ok = (all(not r["problems"] for r in rows) and bool(tasks)
          and ev.get("gold_resolved") == len(tasks) and ev.get("empty_resolved") == 0
          and ev.get("infra_errors") == 0)
    return {"ok": ok, "seconds": round(time.monotonic() - t0, 1), "samples": rows,
            "verified": len(verified), "eval": ev}


def _synth_small(n: int | None, as_json: bool) -> Any:
    """A small synthesis run: one seeded task per family through all three stages and every
    gate, survivors registered (resumable: a rerun skips what is already verified)."""
    if n == 0:
        return None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from envs.registry import Registry
    from synth.families import all_families
    from synth.pipeline import run_synth

    n = n or len(all_families())
    with Registry() as reg, Progress("[progress.description]{task.description}",
                                     BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                     console=err if as_json else out,
                                     transient=as_json) as bar:
        tid = bar.add_task("synthesizing terminal tasks", total=n)
        return run_synth(n=n, families="all", registry=reg, workers=2,
                         progress=lambda _o, done, total: bar.update(
                             tid, completed=done, total=total))


def _print_mining(mined: dict[str, Any]) -> None:
    rows = mined["samples"]
    table = Table(title=f"sample repositories mined and validated ({mined['seconds']:.0f}s): "
                  f"{mined['verified']} verified task(s) registered")
    for col in ("sample", "commits", "candidates", "rejected at mining", "validated",
                "rejected at validation", "verified", "planted fixes", "as planted", "s"):
        table.add_column(col)

    def reasons(d: dict[str, int]) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(d.items())) or "-"

    for r in rows:
        table.add_row(r["sample"], str(r["commits"]), str(r["candidates"]),
                      reasons(r["rejected_at_mining"]), str(r["validated"]),
                      reasons(r["rejected_at_validation"]), str(r["verified"]),
                      str(r["planted_fixes"]), "yes" if not r["problems"] else "NO",
                      f"{r['seconds']:.0f}")
    out.print(table)
    ev = mined["eval"]
    if ev.get("tasks"):
        out.print(f"eval over the {ev['tasks']} verified task(s): gold resolved "
                  f"{ev['gold_resolved']}/{ev['tasks']} ({ev['gold_rate']:.0%}), empty "
                  f"{ev['empty_resolved']}/{ev['tasks']} ({ev['empty_rate']:.0%}), "
                  f"infrastructure errors {ev['infra_errors']}")


