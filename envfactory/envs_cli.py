"""Commands about the machine and its environments: `doctor`, `images build|ls|prune`,
`envs launch|check|gc`, `worker`. Registered under their nouns by envfactory/cli.py."""

from __future__ import annotations

import time
from typing import Any, Optional

import typer
from rich.table import Table

from envs.clikit import command, emit_json, err, logger, out
from harness.executor import EXECUTOR_HELP, queue_runner


@command
def doctor(
    fix: bool = typer.Option(False, "--fix", help="install and start what is missing (root)"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable output"),
) -> None:
    """Check the machine: Docker engine, CA bundle, base images, registry."""
    from envs.doctor import run_checks

    checks = run_checks(fix=fix, log=logger(as_json))
    ok = all(c["ok"] or not c["required"] for c in checks)
    if as_json:
        emit_json({"ok": ok, "checks": checks})
    else:
        table = Table(title="envfactory doctor")
        for col in ("check", "status", "detail"):
            table.add_column(col)
        for c in checks:
            status = "[green]ok[/green]" if c["ok"] else (
                "[red]FAIL[/red]" if c["required"] else "[yellow]warn[/yellow]")
            table.add_row(c["name"], status, c["detail"])
        out.print(table)
    if not ok:
        failed = next(c for c in checks if not c["ok"] and c["required"])
        err.print(f"[red]error:[/red] {failed['name']}: {failed['detail']}", highlight=False)
        raise typer.Exit(1)


# --------------------------------------------------------------------------- images


def human_size(n: int | None) -> str:
    if not n:
        return "-"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit != "GiB" else f"{size:.2f} {unit}"
        size /= 1024
    return str(n)


@command
def images_build(
    names: Optional[list[str]] = typer.Argument(None, help="images to build (default: all)"),
    suite: Optional[str] = typer.Option(None, help="Debian suite: bullseye, bookworm, trixie"),
    ca_bundle: Optional[str] = typer.Option(None, "--ca-bundle",
                                            help="PEM bundle to inject ('none': off)"),
    rebuild: bool = typer.Option(False, help="build even where the tag exists"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Build the base and language images (a cache hit when nothing changed)."""
    from envs import ca, images

    wanted = names or list(images.recipes())
    for name in wanted:  # every name and the suite checked before anything is built
        images.get_recipe(name)
    images.check_suite(suite)
    bundle: Any = "auto" if ca_bundle is None else ca.detect(ca_bundle)
    start = time.monotonic()
    log = logger(as_json)
    records = []
    for name in wanted:
        records.append(images.ensure(name, suite=suite, ca_bundle=bundle, log=log,
                                     rebuild=rebuild))
    record_images(records)
    if as_json:
        emit_json({"seconds": round(time.monotonic() - start, 2),
                    "images": [r.model_dump(mode="json") for r in records]})
        return
    table = Table(title=f"images ({time.monotonic() - start:.1f}s)")
    for col in ("image", "tag", "size", "versions"):
        table.add_column(col)
    for r in records:
        table.add_row(r.tag.split("/")[-1].split(":")[0], r.tag, human_size(r.size_bytes),
                      ", ".join(f"{k} {v}" for k, v in r.versions.items()))
    out.print(table)


def record_images(records: list[Any]) -> None:
    try:
        from envs.registry import Registry
    except ImportError:
        return
    with Registry() as reg:
        for r in records:
            reg.put_image(r)


@command
def images_ls(
    suite: Optional[str] = typer.Option(None),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """List envfactory images on the engine ('current' = what the recipes build now)."""
    from envs import images

    local = images.list_local(suite=suite)
    if as_json:
        emit_json([vars(i) for i in local])
        return
    table = Table(title="envfactory images")
    for col in ("tag", "recipe", "kind", "size", "created", "current"):
        table.add_column(col)
    for i in local:
        table.add_row(i.tag, i.recipe, i.kind, human_size(i.size_bytes), i.created,
                      "yes" if i.current else "stale")
    out.print(table)


@command
def images_prune(
    all_images: bool = typer.Option(False, "--all", help="remove current images too"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Remove stale envfactory images (tags the recipes no longer build)."""
    from envs import images

    removed = images.prune(all_images=all_images, log=logger(as_json))
    if as_json:
        emit_json({"removed": removed})
    else:
        out.print(f"removed {len(removed)} image(s)")


@command
def check_env_cmd(
    task_ids: list[str] = typer.Argument(..., help="registered task ids (SWE or terminal)"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Check tasks as an RL trainer needs them: reset is deterministic, the reference
    solution gets reward 1, doing nothing gets 0, the verify timeout is honoured."""
    from envs.check import cli_check_env

    code = cli_check_env(task_ids, as_json=as_json)
    if code:
        raise typer.Exit(code)


@command
def gc(
    all_containers: bool = typer.Option(False, "--all",
                                        help="remove every envfactory sandbox, live or not"),
    older_than: Optional[float] = typer.Option(None, help="also remove sandboxes older than "
                                               "this many seconds"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Remove leftover sandboxes (containers whose owner process is gone)."""
    from envs import sandbox

    removed = sandbox.gc(all=all_containers, older_than_s=older_than)
    if as_json:
        emit_json({"removed": removed})
    else:
        out.print(f"removed {len(removed)} leftover sandbox(es)")


@command
def worker(
    concurrency: int = typer.Option(2, "--concurrency", "-c", min=1,
                                    help="jobs this worker runs at once (processes)"),
    broker: Optional[str] = typer.Option(None, "--broker",
                                         help="Celery broker URL (default: "
                                         "ENVFACTORY_BROKER_URL)"),
    loglevel: str = typer.Option("INFO", "--loglevel"),
) -> None:
    """Run queued jobs (build, validate, synth verify, eval) until stopped; each result goes
    to the registry (ENVFACTORY_DB_URL), once."""
    from harness.queue import run_worker

    run_worker(concurrency=concurrency, loglevel=loglevel, broker_url=broker)


@command
def launch(
    source: str = typer.Argument(..., help="path of a git repository, or its URL"),
    commit: Optional[str] = typer.Option(None, "--commit", help="commit to build (default HEAD)"),
    suite: Optional[str] = typer.Option(None, help="Debian suite to start from"),
    max_steps: int = typer.Option(8, "--max-steps", help="diagnose-and-retry actions at most"),
    rebuild: bool = typer.Option(False, help="rebuild the env image even if it exists"),
    # `launch --mine` is the last release's spelling of `tasks mine`: hidden, kept one more.
    mine: bool = typer.Option(False, "--mine", hidden=True),
    executor: Optional[str] = typer.Option(None, "--executor", hidden=True,
                                           help="with --mine: " + EXECUTOR_HELP),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Build a repository into a verified environment: detect, plan, build, run its tests."""
    from repolaunch.build import launch as do_launch

    log = logger(as_json)
    if mine:
        from repolaunch.pipeline import mine_and_validate
        from repolaunch.sources import local_source

        report = mine_and_validate(local_source(source, log=log), log=log,
                                   runner=queue_runner(executor, log=log))
        if as_json:
            emit_json(report.model_dump(mode="json"))
        else:
            table = Table(title=f"mined {report.repo}: {report.verified} verified task(s) "
                          f"in {report.seconds:.0f}s")
            table.add_column("stage")
            table.add_column("count", justify="right")
            for stage, n in report.rows():
                table.add_row(stage, str(n))
            out.print(table)
        return
    if suite is not None:
        from envs.images import check_suite

        check_suite(suite)
    with (err if as_json else out).status(f"launching {source} ..."):
        result = do_launch(source, commit=commit, suite=suite, max_steps=max_steps,
                           rebuild=rebuild, log=log)
    data = {
        "repo": result.repo, "commit": result.commit, "ok": result.ok,
        "failure": result.failure, "language": result.plan.language.value,
        "build_system": result.plan.build_system, "test_framework": result.plan.test_framework,
        "suite": result.suite, "image": result.env.image if result.env else None,
        "cache_hit": result.cache_hit, "tests_found": result.tests_found,
        "counts": result.counts, "minutes": round(result.seconds / 60, 2),
        "seconds": result.seconds, "setup_steps": list(result.env.setup_steps)
        if result.env else list(result.plan.setup_steps),
        "test_command": result.plan.test_command, "report_format": result.plan.report_format,
        "transcript": result.transcript_path,
    }
    if as_json:
        emit_json(data)
    else:
        table = Table(title=f"launch {result.repo} @ {result.commit[:12]}", show_header=False)
        table.add_column("field")
        table.add_column("value", overflow="fold")
        for key in ("ok", "failure", "language", "build_system", "test_framework", "suite",
                    "image", "cache_hit", "tests_found", "counts", "seconds", "test_command",
                    "transcript"):
            value = data[key]
            if key == "counts" and value:
                value = ", ".join(f"{k} {v}" for k, v in value.items() if v)
            table.add_row(key, str(value))
        out.print(table)
    if not result.ok:
        raise typer.Exit(1)


