"""The envfactory command line: the composition root, and nothing else.

Global options are generated from `envs.config.Settings` (one option per field, each also
settable as `ENVFACTORY_<FIELD>`). Every command has `--json`, and a failure exits non-zero
with a one-line reason.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from envs.config import Settings, reset_settings_cache
from harness.executor import EXECUTOR_HELP, make_executor, queue_runner

app = typer.Typer(
    name="envfactory",
    help="A verifiable agent environment factory.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
images_app = typer.Typer(help="Base and language toolchain images.", no_args_is_help=True)
app.add_typer(images_app, name="images")


def _mount_subapps() -> None:
    # Each layer above envs may bring its own commands (ARCHITECTURE.md); merged at the top.
    from harness.serve_cli import serve_command
    from policy.cli import app as policy_app
    from repolaunch.cli import app as repolaunch_app
    from synth.cli import app as synth_app

    app.command("serve")(serve_command)
    app.add_typer(repolaunch_app)
    app.add_typer(synth_app, name="synth")
    app.add_typer(policy_app, name="policy")


_mount_subapps()

# Tables stay readable when piped or logged (rich falls back to 80 columns there).
out = Console(width=None if sys.stdout.isatty() else 140)
err = Console(stderr=True, soft_wrap=True)

F = TypeVar("F", bound=Callable[..., Any])


def _expected_errors() -> tuple[type[BaseException], ...]:
    from envs.ca import CAError
    from envs.engine import EngineError
    from envs.images import ImageBuildError

    errors: list[type[BaseException]] = [EngineError, ImageBuildError, CAError, KeyError,
                                         ValueError, FileNotFoundError]
    try:
        from harness.evaluate import EvalError

        errors.append(EvalError)
    except ImportError:
        pass
    try:
        from envs.sandbox import SandboxError

        errors.append(SandboxError)
    except ImportError:
        pass
    try:
        from envs.registry import RegistryError

        errors.append(RegistryError)
    except ImportError:
        pass
    return tuple(errors)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _terminate_as_interrupt() -> None:
    """SIGTERM (a `timeout`, a scheduler) unwinds like Ctrl-C, so sandboxes are removed."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt)


def _reap_own_sandboxes() -> None:
    """A signal can land between the engine creating a container and a sandbox holding it,
    where no context manager can see it: on the way out, remove whatever this process owns."""
    sandbox = sys.modules.get("envs.sandbox")
    if sandbox is None:
        return  # this command never touched the engine
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second TERM must not cut the cleanup
    with contextlib.suppress(Exception):
        sandbox.gc(mine=True)


def command(fn: F) -> F:
    """Turn the expected failures of a command into one line on stderr and exit code 1."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _terminate_as_interrupt()
        try:
            return fn(*args, **kwargs)
        except _expected_errors() as exc:
            text = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
            err.print(f"[red]error:[/red] {str(text).splitlines()[0] if text else type(exc).__name__}",
                      highlight=False)
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            err.print("interrupted")
            _reap_own_sandboxes()
            raise typer.Exit(130) from None

    return wrapper  # type: ignore[return-value]


def _emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")


def _log(json_mode: bool) -> Callable[[str], None]:
    # In --json mode stdout carries only the JSON document; progress goes to stderr.
    console = err if json_mode else out

    def log(msg: str) -> None:
        console.log(msg, highlight=False)

    return log


# --------------------------------------------------------------------------- global options


def _settings_options(ctx: typer.Context, **values: Optional[str]) -> None:
    for name, value in values.items():
        if value is not None:
            os.environ[f"ENVFACTORY_{name.upper()}"] = str(value)
    reset_settings_cache()


def _build_callback() -> Callable[..., None]:
    params = [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                annotation=typer.Context)]
    for name, field in Settings.model_fields.items():
        params.append(inspect.Parameter(
            name, inspect.Parameter.KEYWORD_ONLY, annotation=Optional[str],
            default=typer.Option(None, f"--{name.replace('_', '-')}",
                                 help=f"{field.description} (env ENVFACTORY_{name.upper()})",
                                 show_default=False)))

    def callback(ctx: typer.Context, **values: Optional[str]) -> None:
        _settings_options(ctx, **values)

    callback.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    callback.__doc__ = "A verifiable agent environment factory."
    return callback


app.callback()(_build_callback())


def _version_callback(value: bool) -> None:
    if value:
        from importlib.metadata import version

        out.print(f"envfactory {version('envfactory')}")
        raise typer.Exit()


@app.command("version")
def version_cmd() -> None:
    """Print the version."""
    _version_callback(True)


# --------------------------------------------------------------------------- doctor


@app.command()
@command
def doctor(
    fix: bool = typer.Option(False, "--fix", help="install and start what is missing (root)"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable output"),
) -> None:
    """Check the machine: Docker engine, CA bundle, base images, registry."""
    from envs.doctor import run_checks

    checks = run_checks(fix=fix, log=_log(as_json))
    ok = all(c["ok"] or not c["required"] for c in checks)
    if as_json:
        _emit_json({"ok": ok, "checks": checks})
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


def _human(n: int | None) -> str:
    if not n:
        return "-"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit != "GiB" else f"{size:.2f} {unit}"
        size /= 1024
    return str(n)


@images_app.command("build")
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

    bundle: Any = "auto" if ca_bundle is None else ca.detect(ca_bundle)
    start = time.monotonic()
    log = _log(as_json)
    records = []
    for name in names or list(images.recipes()):
        images.get_recipe(name)  # fail early, listing the known names
        records.append(images.ensure(name, suite=suite, ca_bundle=bundle, log=log,
                                     rebuild=rebuild))
    _record_images(records)
    if as_json:
        _emit_json({"seconds": round(time.monotonic() - start, 2),
                    "images": [r.model_dump(mode="json") for r in records]})
        return
    table = Table(title=f"images ({time.monotonic() - start:.1f}s)")
    for col in ("image", "tag", "size", "versions"):
        table.add_column(col)
    for r in records:
        table.add_row(r.tag.split("/")[-1].split(":")[0], r.tag, _human(r.size_bytes),
                      ", ".join(f"{k} {v}" for k, v in r.versions.items()))
    out.print(table)


def _record_images(records: list[Any]) -> None:
    try:
        from envs.registry import Registry
    except ImportError:
        return
    with Registry() as reg:
        for r in records:
            reg.put_image(r)


@images_app.command("ls")
@command
def images_ls(
    suite: Optional[str] = typer.Option(None),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """List envfactory images on the engine ('current' = what the recipes build now)."""
    from envs import images

    local = images.list_local(suite=suite)
    if as_json:
        _emit_json([vars(i) for i in local])
        return
    table = Table(title="envfactory images")
    for col in ("tag", "recipe", "kind", "size", "created", "current"):
        table.add_column(col)
    for i in local:
        table.add_row(i.tag, i.recipe, i.kind, _human(i.size_bytes), i.created,
                      "yes" if i.current else "stale")
    out.print(table)


@images_app.command("prune")
@command
def images_prune(
    all_images: bool = typer.Option(False, "--all", help="remove current images too"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Remove stale envfactory images (tags the recipes no longer build)."""
    from envs import images

    removed = images.prune(all_images=all_images, log=_log(as_json))
    if as_json:
        _emit_json({"removed": removed})
    else:
        out.print(f"removed {len(removed)} image(s)")


# --------------------------------------------------------------------------- gc


@app.command("check-env")
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


@app.command()
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
        _emit_json({"removed": removed})
    else:
        out.print(f"removed {len(removed)} leftover sandbox(es)")


# --------------------------------------------------------------------------- eval


@app.command("eval")
@command
def eval_cmd(
    predictions: str = typer.Argument(..., help="predictions JSONL, or 'gold' / 'empty'"),
    dataset: Optional[Path] = typer.Option(None, "--dataset", "-d",
                                           help="SWE-bench-style instance JSONL "
                                           "(default: the registry's tasks)"),
    run_id: Optional[str] = typer.Option(None, "--run-id", help="name of the run (resumable)"),
    workers: int = typer.Option(1, "--workers", "-w", min=1, help="parallel sandboxes"),
    timeout: Optional[float] = typer.Option(None, "--timeout",
                                            help="seconds for each test run"),
    instance_ids: Optional[list[str]] = typer.Option(None, "--instance-id", "-i",
                                                     help="only these instances"),
    force: bool = typer.Option(False, "--force", help="rerun finished instances"),
    executor: Optional[str] = typer.Option(None, "--executor", help=EXECUTOR_HELP),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Evaluate predicted patches: a fresh sandbox each, apply, run, grade."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from harness.evaluate import evaluate, load_tasks

    tasks = load_tasks(dataset)
    if not tasks:
        raise ValueError("no tasks: register some or pass --dataset FILE.jsonl")
    console = err if as_json else out
    with Progress("[progress.description]{task.description}", BarColumn(),
                  MofNCompleteColumn(), TimeElapsedColumn(), console=console,
                  transient=as_json) as bar:
        total = len(instance_ids) if instance_ids else None
        tid = bar.add_task("evaluating", total=total or len(tasks))

        def progress(report: dict) -> None:
            bar.advance(tid)
            mark = "[green]resolved[/green]" if report["resolved"] else (
                f"[yellow]{report['failure_kind']}[/yellow]"
                if report["failure_kind"] != "NONE" else "[red]unresolved[/red]")
            bar.console.log(f"{report['instance_id']}: {mark}", highlight=False)

        summary = evaluate(predictions, tasks=tasks, run_id=run_id, workers=workers,
                           timeout=timeout, instance_ids=instance_ids, force=force,
                           progress=progress, executor=make_executor(
                               executor, workers, log=bar.console.log, force=force))
    if as_json:
        _emit_json(summary.model_dump(mode="json"))
        return
    table = Table(title=f"eval {summary.run_id}: {summary.resolved_instances}/"
                  f"{summary.submitted_instances} resolved "
                  f"({100 * summary.resolved_rate:.1f}%), {summary.seconds:.1f}s")
    for col in ("instance", "resolved", "failure kind", "F2P", "P2P", "seconds", "reason"):
        table.add_column(col, overflow="fold")
    for r in summary.instances:
        ts = r.get("tests_status") or {}
        def frac(key: str, ts: dict = ts) -> str:
            b = ts.get(key)
            return f"{len(b['success'])}/{len(b['success']) + len(b['failure'])}" if b else "-"
        table.add_row(r["instance_id"], "yes" if r["resolved"] else "no", r["failure_kind"],
                      frac("FAIL_TO_PASS"), frac("PASS_TO_PASS"),
                      f"{r['timings'].get('total', 0):.1f}", r["reason"][:80])
    out.print(table)
    out.print(f"report: {summary.run_dir}/report.json"
              + (f" ({summary.skipped_instances} finished earlier, not rerun)"
                 if summary.skipped_instances else ""))


# --------------------------------------------------------------------------- worker


@app.command()
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


# --------------------------------------------------------------------------- launch


@app.command()
@command
def launch(
    source: str = typer.Argument(..., help="path of a git repository, or its URL"),
    commit: Optional[str] = typer.Option(None, "--commit", help="commit to build (default HEAD)"),
    suite: Optional[str] = typer.Option(None, help="Debian suite to start from"),
    max_steps: int = typer.Option(8, "--max-steps", help="diagnose-and-retry actions at most"),
    rebuild: bool = typer.Option(False, help="rebuild the env image even if it exists"),
    mine: bool = typer.Option(False, "--mine", help="mine its history into verified tasks: "
                              "mined -> built -> validated -> registered"),
    executor: Optional[str] = typer.Option(None, "--executor",
                                           help="with --mine: " + EXECUTOR_HELP),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Build a repository into a verified environment: detect, plan, build, run its tests."""
    from repolaunch.build import LaunchError
    from repolaunch.build import launch as do_launch

    log = _log(as_json)
    if mine:
        from repolaunch.pipeline import mine_and_validate
        from repolaunch.sources import local_source

        report = mine_and_validate(local_source(source, log=log), log=log,
                                   runner=queue_runner(executor, log=log))
        if as_json:
            _emit_json(report.model_dump(mode="json"))
        else:
            table = Table(title=f"mined {report.repo}: {report.verified} verified task(s) "
                          f"in {report.seconds:.0f}s")
            table.add_column("stage")
            table.add_column("count", justify="right")
            for stage, n in report.rows():
                table.add_row(stage, str(n))
            out.print(table)
        return
    try:
        with (err if as_json else out).status(f"launching {source} ..."):
            result = do_launch(source, commit=commit, suite=suite, max_steps=max_steps,
                               rebuild=rebuild, log=log)
    except LaunchError as exc:
        raise ValueError(str(exc)) from None
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
        _emit_json(data)
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


# --------------------------------------------------------------------------- import


@app.command("import")
@command
def import_cmd(
    path: Path = typer.Argument(..., help="SWE-bench-style instance JSONL (or JSON array)"),
    repos: Optional[Path] = typer.Option(None, "--repos", help="directory of clones or bare "
                                         "mirrors, laid out owner/name or owner__name"),
    register: bool = typer.Option(False, "--register", help="register the verified tasks"),
    instance_ids: Optional[list[str]] = typer.Option(None, "--instance-id", "-i"),
    limit: Optional[int] = typer.Option(None, help="at most this many instances"),
    state: Optional[Path] = typer.Option(None, "--state", help="JSONL that makes the run "
                                         "resumable: finished instances are skipped"),
    whole_suite: bool = typer.Option(False, "--whole-suite", help="run every test, not only "
                                     "the test patch's files (SWE-bench's scope)"),
    timeout: Optional[float] = typer.Option(None, "--timeout", help="seconds per test run"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Import instances: build each environment ourselves, validate, compare the test lists;
    each instance that does not agree says why (a typed cause; logs under
    $ENVFACTORY_HOME/logs/import/<instance_id>/)."""
    from repolaunch.importer import import_instances

    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    report = import_instances(path, repos=repos, register=register, instance_ids=instance_ids,
                              limit=limit, state=state, whole_suite=whole_suite,
                              timeout=timeout, log=_log(as_json))
    if as_json:
        _emit_json({**report.model_dump(mode="json"), "summary": report.summary(),
                    "causes": report.causes()})
    else:
        table = Table(title=f"import {path.name}: {report.summary()}")
        for col in ("instance", "status", "python", "FAIL_TO_PASS", "PASS_TO_PASS",
                    "cause", "detail"):
            table.add_column(col, overflow="fold")
        for r in report.instances:
            def rel(a: Any) -> str:
                return "-" if a is None else f"{a.relation} ({a.both}/{a.theirs})"
            table.add_row(r.instance_id, r.status, r.python or "-", rel(r.fail_to_pass),
                          rel(r.pass_to_pass), r.cause or "", (r.error or r.detail)[:160])
        out.print(table)
    errors = report.errors()
    if errors:
        raise ValueError(f"{len(errors)} instance(s) failed, first: {errors[0]}")


# --------------------------------------------------------------------------- run (main job)


@app.command()
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
    workers: int = typer.Option(2, "--workers", "-w", min=1,
                                help="samples mined and validated at a time"),
    synth_n: Optional[int] = typer.Option(None, "--synth", min=0,
                                          help="terminal tasks to synthesize and verify "
                                          "(default: one per task family; 0: none)"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """The main job on the embedded defaults: engine, base images, the sample repositories
    launched, mined, validated into verified tasks and registered, gold/empty evaluated."""
    from envs import engine, images
    from envs.models import Language

    log = _log(as_json)
    start = time.monotonic()
    engine.ensure_engine(log=log)
    records = {r.tag: r for r in images.ensure_all(suite=suite, log=log)}
    _record_images(list(records.values()))
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
    from data import samples as sample_mod

    names = list(only or sample_mod.names())
    for n in names:
        sample_mod.get(n)  # an unknown name fails here, listing the known ones
    launched = _launch_samples(log, as_json, names) if samples_too else []
    launch_seconds = round(time.monotonic() - start, 1)
    mined = _mine_samples(log, as_json, names, workers) if samples_too and mine_too else None
    synth_report = _synth_small(synth_n, as_json)
    seconds = round(time.monotonic() - start, 1)
    failed = [x for x in launched if not x["ok"]]
    if as_json:
        _emit_json({"seconds": seconds, "languages": rows, "samples": launched,
                    "mining": mined,
                    "synth": synth_report.summary() if synth_report else None})
    else:
        table = Table(title=f"envfactory: nine-language toolchain images ({image_seconds}s)")
        for col in ("language", "image", "toolchain", "size"):
            table.add_column(col)
        for row in rows:
            table.add_row(row["language"], row["image"],
                          ", ".join(f"{k} {v}" for k, v in row["versions"].items()),
                          _human(row["size_bytes"]))
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
        raise ValueError(f"{len(failed)} sample(s) did not build, "
                         f"{sum(not x['as_planted'] for x in launched)} not as planted")
    if synth_report is not None and synth_report.verified < len(synth_report.outcomes):
        gates = ", ".join(f"{k} {v}" for k, v in sorted(synth_report.gates().items()))
        raise ValueError(f"synthesized tasks failed verification: {gates}")
    if mined and not mined["ok"]:
        bad = [f"{x['sample']}: {x['problems'][0]}" for x in mined["samples"] if x["problems"]]
        raise ValueError(f"mining not as planted: {'; '.join(bad) or mined['eval']}"[:400])


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


def main() -> None:
    app()


if __name__ == "__main__":
    main()
