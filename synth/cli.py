"""The synth sub-app: `envfactory synth --families all --n N` (draft -> implement ->
verify -> register), plus `synth families`, `synth ls`, `synth export`, `synth import`.

Mounted by envfactory/cli.py (`app.add_typer(synth_app, name="synth")`); runnable alone
as `python -m synth.cli`. Every command takes --json (stdout then carries only JSON;
progress goes to stderr) and exits non-zero with a one-line reason on failure.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from harness.executor import queue_runner

app = typer.Typer(help="Synthesize verified terminal tasks (Harbor / Terminal-Bench).",
                  add_completion=False, pretty_exceptions_enable=False,
                  invoke_without_command=True)

out = Console(width=None if sys.stdout.isatty() else 140)
err = Console(stderr=True, soft_wrap=True)
F = TypeVar("F", bound=Callable[..., Any])


class CLIError(RuntimeError):
    """A failure the user should read as one line."""


def _expected() -> tuple[type[BaseException], ...]:
    from envs.images import ImageBuildError
    from envs.registry import RegistryError
    from envs.sandbox import SandboxError

    return (CLIError, RegistryError, SandboxError, ImageBuildError, ValueError,
            FileNotFoundError, OSError, KeyError)


def command(fn: F) -> F:
    """Expected failures -> one line on stderr, exit 1."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except typer.Exit:
            raise
        except _expected() as exc:
            text = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
            line = str(text).strip().splitlines()[0] if str(text).strip() else type(exc).__name__
            err.print(f"[red]error:[/red] {line}", highlight=False)
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            err.print("interrupted (rerun the same command to resume)")
            raise typer.Exit(130) from None

    return wrapper  # type: ignore[return-value]


def _emit(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")


def yield_tables(report: Any) -> list[Table]:
    """The per-stage and per-family yield tables of a SynthReport."""
    stages = report.stages()
    total = max(stages["planned"], 1)
    t1 = Table(title=f"synth yield by stage (n={report.n}, seed={report.seed}, "
                     f"{report.wall_s:.0f}s)")
    t1.add_column("stage")
    t1.add_column("tasks", justify="right")
    t1.add_column("of planned", justify="right")
    for k, v in stages.items():
        t1.add_row(k, str(v), f"{100 * v / total:.1f}%")
    gates = report.gates()
    if gates:
        t1.add_row("failed at", ", ".join(f"{g}: {c}" for g, c in sorted(gates.items())), "")
    t2 = Table(title="synth yield by family")
    for col in ("family", "category", "planned", "drafted", "implemented", "verified",
                "yield", "failed gates"):
        t2.add_column(col, justify="right" if col in ("planned", "drafted", "implemented",
                                                      "verified", "yield") else "left")
    for f in report.per_family():
        t2.add_row(f.family, f.category, str(f.planned), str(f.drafted), str(f.implemented),
                   str(f.verified), f"{100 * f.verified / max(f.planned, 1):.0f}%",
                   ", ".join(f"{g}: {c}" for g, c in sorted(f.failed_gates.items())))
    return [t1, t2]


def _registry():
    from envs.registry import Registry

    return Registry()


@app.callback()
@command
def synth(
    ctx: typer.Context,
    families: str = typer.Option("all", "--families", help="'all' or comma-separated names"),
    n: int = typer.Option(28, "--n", help="how many tasks to draft"),
    seed: int = typer.Option(0, "--seed", help="run seed (same seed: same task ids)"),
    workers: int = typer.Option(3, "--workers", help="tasks verified concurrently"),
    resume: bool = typer.Option(True, "--resume/--no-resume",
                                help="skip tasks the state file records as finished"),
    llm: bool = typer.Option(False, "--llm", help="rephrase drafts via ENVFACTORY_LLM_URL"),
    executor: Optional[str] = typer.Option(
        None, "--executor", help="local (threads here) or celery (`envfactory worker` "
        "processes; default: ENVFACTORY_EXECUTOR, else local)"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable output"),
) -> None:
    """Draft, implement, verify and register N terminal tasks; print the yield tables."""
    if ctx.invoked_subcommand is not None:
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from synth.pipeline import run_synth

    console = err if as_json else out
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=console, transient=True)
    job = bar.add_task("synthesizing", total=n)

    def progress(o: Any, done: int, total: int) -> None:
        bar.update(job, completed=done, description=f"{o.family}")
        if not o.passed:
            console.print(f"  {o.task_id}: [yellow]{o.failed_gate.value}[/yellow] {o.detail[:120]}",
                          highlight=False)

    reg = _registry()
    try:
        with bar:
            report = run_synth(n=n, families=families, seed=seed, registry=reg, workers=workers,
                               resume=resume, progress=progress, use_llm=llm,
                               runner=queue_runner(executor, log=console.log))
    finally:
        reg.close()
    if as_json:
        _emit({**report.summary(), "outcomes": [
            {"task_id": o.task_id, "family": o.family, "passed": o.passed,
             "failed_gate": o.failed_gate.value if o.failed_gate else None, "detail": o.detail,
             "seconds": o.seconds} for o in report.outcomes]})
    else:
        for t in yield_tables(report):
            out.print(t)
        out.print(f"survival: {report.verified}/{len(report.outcomes)} "
                  f"({100 * report.survival:.1f}%); state: {report.state_file}", highlight=False)
    if report.verified == 0:
        raise typer.Exit(1)


@app.command("families")
@command
def families_cmd(as_json: bool = typer.Option(False, "--json")) -> None:
    """List the task families."""
    from synth.families import all_families

    rows = [{"family": f.name, "category": f.category, "difficulty": f.difficulty.value,
             "image": f.image, "language": f.language} for f in all_families().values()]
    if as_json:
        _emit(rows)
        return
    t = Table(title=f"{len(rows)} task families")
    for c in ("family", "category", "difficulty", "image", "language"):
        t.add_column(c)
    for r in rows:
        t.add_row(*(str(r[c] or "") for c in ("family", "category", "difficulty", "image",
                                              "language")))
    out.print(t)


@app.command("ls")
@command
def ls_cmd(family: Optional[str] = typer.Option(None, "--family"),
           as_json: bool = typer.Option(False, "--json")) -> None:
    """List registered terminal tasks."""
    reg = _registry()
    try:
        tasks = reg.list_terminal_tasks(family=family)
    finally:
        reg.close()
    rows = [{"task_id": t.task_id, "family": t.family, "category": t.category,
             "difficulty": t.difficulty.value,
             "gates": sum(r.passed for r in t.verification)} for t in tasks]
    if as_json:
        _emit(rows)
        return
    t = Table(title=f"{len(rows)} terminal tasks")
    for c in ("task_id", "family", "category", "difficulty", "gates"):
        t.add_column(c)
    for r in rows:
        t.add_row(*(str(r[c]) for c in ("task_id", "family", "category", "difficulty", "gates")))
    out.print(t)


@app.command("export")
@command
def export_cmd(
    dest: Path = typer.Argument(..., help="directory to write task directories into"),
    fmt: str = typer.Option("harbor", "--format", help="harbor or tb1"),
    family: Optional[str] = typer.Option(None, "--family"),
    task_id: Optional[list[str]] = typer.Option(None, "--task", help="only these task ids"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Export registered tasks as Harbor or Terminal-Bench 1 directories."""
    from synth.export import check_layout, export

    reg = _registry()
    try:
        tasks = reg.list_terminal_tasks(family=family)
    finally:
        reg.close()
    if task_id:
        tasks = [t for t in tasks if t.task_id in set(task_id)]
    if not tasks:
        raise CLIError("no registered terminal tasks match")
    written = []
    for t in tasks:
        root = export(t, dest, fmt)
        problems = check_layout(root, "harbor" if fmt == "harbor" else "tb1")
        if problems:
            raise CLIError(f"{root}: {problems[0]}")
        written.append(str(root))
    if as_json:
        _emit({"format": fmt, "written": written})
    else:
        out.print(f"exported {len(written)} task(s) to {dest} ({fmt})", highlight=False)


@app.command("import")
@command
def import_cmd(
    paths: list[Path] = typer.Argument(..., help="Harbor or TB1 task directories"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Verify Harbor / TB1 task directories and register those that pass every gate."""
    from synth.pipeline import import_task

    reg = _registry()
    results = []
    try:
        for p in paths:
            if not p.is_dir():
                raise CLIError(f"{p}: no such task directory")
            _, o = import_task(p, registry=reg)
            results.append(o)
            if not as_json:
                verdict = "[green]registered[/green]" if o.passed else \
                    f"[yellow]rejected at {o.failed_gate.value}[/yellow]: {o.detail[:120]}"
                out.print(f"{p}: {o.task_id} {verdict}", highlight=False)
    finally:
        reg.close()
    if as_json:
        _emit([{"task_id": o.task_id, "passed": o.passed,
                "failed_gate": o.failed_gate.value if o.failed_gate else None,
                "detail": o.detail} for o in results])
    if not all(o.passed for o in results):
        raise typer.Exit(1)


if __name__ == "__main__":
    app()
