"""The synth sub-app: `envfactory synth --families all --n N` (draft -> implement ->
verify -> register), plus `synth families`, `synth ls`, `synth export`, `synth import`.

Mounted by envfactory/cli.py (`app.add_typer(synth_app, name="synth")`); runnable alone
as `python -m synth.cli`. Every command takes --json (stdout then carries only JSON;
progress goes to stderr) and exits non-zero with a one-line reason on failure.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, Optional, get_type_hints

import typer
from rich.table import Table

from envs.clikit import command, emit_json, err, on_interrupt, out
from envs.errors import UserError, unknown
from harness.executor import queue_runner

app = typer.Typer(help="Synthesize verified terminal tasks (Harbor / Terminal-Bench).",
                  add_completion=False, pretty_exceptions_enable=False,
                  invoke_without_command=True)

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


@command
def synthesize(
    families: str = typer.Option("all", "--families", help="'all' or comma-separated names"),
    n: int = typer.Option(28, "--n", help="how many tasks to draft"),
    seed: int = typer.Option(0, "--seed", help="run seed (same seed: same task ids)"),
    workers: Optional[int] = typer.Option(None, "--workers", "-w", min=1,
                                          help="tasks verified concurrently "
                                          "(default: ENVFACTORY_WORKERS)"),
    resume: bool = typer.Option(True, "--resume/--no-resume",
                                help="skip tasks the state file records as finished"),
    llm: bool = typer.Option(False, "--llm", help="rephrase drafts via ENVFACTORY_LLM_URL"),
    executor: Optional[str] = typer.Option(
        None, "--executor", help="local (threads here) or celery (`envfactory worker` "
        "processes; default: ENVFACTORY_EXECUTOR, else local)"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable output"),
) -> None:
    """Draft, implement, verify and register N terminal tasks; print the yield tables."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from envs.config import get_settings
    from synth.families import select
    from synth.pipeline import run_synth, state_path

    select(families)  # an unknown family fails before any work
    if n < 1:
        raise UserError("must be at least 1", field="--n", value=n)
    workers = workers or get_settings().workers
    on_interrupt(f"rerun the same command to resume (finished tasks are kept in "
                 f"{state_path(seed, [f.name for f in select(families)])})")
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
        emit_json({**report.summary(), "outcomes": [
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


def synth(ctx: typer.Context, **options: Any) -> None:
    """Draft, implement, verify and register N terminal tasks (`envfactory tasks synth`)."""
    if ctx.invoked_subcommand is None:
        synthesize(**options)


# `envfactory synth --n 2` (the old spelling) takes synthesize's options on the group itself.
_hints = get_type_hints(synthesize)
synth.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context),
     *(p.replace(annotation=_hints[p.name])
       for p in inspect.signature(synthesize).parameters.values())])
app.callback()(synth)


@app.command("families")
@command
def families_cmd(as_json: bool = typer.Option(False, "--json")) -> None:
    """List the task families."""
    from synth.families import all_families

    rows = [{"family": f.name, "category": f.category, "difficulty": f.difficulty.value,
             "image": f.image, "language": f.language} for f in all_families().values()]
    if as_json:
        emit_json(rows)
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
        emit_json(rows)
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
    from synth.export import FORMATS, check_layout, export

    if fmt not in FORMATS:
        raise unknown("export format", fmt, FORMATS, field="--format")
    reg = _registry()
    try:
        tasks = reg.list_terminal_tasks(family=family)
    finally:
        reg.close()
    if task_id:
        tasks = [t for t in tasks if t.task_id in set(task_id)]
    if not tasks:
        raise UserError("no registered terminal tasks match")
    written = []
    for t in tasks:
        root = export(t, dest, fmt)
        problems = check_layout(root, "harbor" if fmt == "harbor" else "tb1")
        if problems:
            raise UserError(f"{root}: {problems[0]}")
        written.append(str(root))
    if as_json:
        emit_json({"format": fmt, "written": written})
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

    for p in paths:  # every path checked before any is verified
        if not p.is_dir():
            raise UserError("no such task directory", where=str(p))
    reg = _registry()
    results = []
    try:
        for p in paths:
            _, o = import_task(p, registry=reg)
            results.append(o)
            if not as_json:
                verdict = "[green]registered[/green]" if o.passed else \
                    f"[yellow]rejected at {o.failed_gate.value}[/yellow]: {o.detail[:120]}"
                out.print(f"{p}: {o.task_id} {verdict}", highlight=False)
    finally:
        reg.close()
    if as_json:
        emit_json([{"task_id": o.task_id, "passed": o.passed,
                "failed_gate": o.failed_gate.value if o.failed_gate else None,
                "detail": o.detail} for o in results])
    if not all(o.passed for o in results):
        raise typer.Exit(1)


if __name__ == "__main__":
    app()
