"""`runs eval` (envfactory eval): predictions evaluated in fresh sandboxes, and the runs the
registry and the runs directory hold (`runs ls`, `runs show`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table

from envs.clikit import command, emit_json, err, on_interrupt, out, print_fields
from envs.config import get_settings
from envs.errors import UserError
from harness.executor import EXECUTOR_HELP, make_executor


@command
def eval_cmd(
    predictions: str = typer.Argument(..., help="predictions JSONL, or 'gold' / 'empty'"),
    dataset: Optional[Path] = typer.Option(None, "--dataset", "-d",
                                           help="SWE-bench-style instance JSONL "
                                           "(default: the registry's tasks)"),
    run_id: Optional[str] = typer.Option(None, "--run-id", help="name of the run (resumable)"),
    workers: Optional[int] = typer.Option(None, "--workers", "-w", min=1,
                                          help="parallel sandboxes (default: "
                                          "ENVFACTORY_WORKERS)"),
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

    from harness.evaluate import default_run_id, evaluate, load_tasks, select_predictions

    make_executor(executor, 1)  # an unknown executor fails before any work
    tasks = load_tasks(dataset)
    if not tasks:
        raise UserError("no tasks: register some or pass --dataset FILE.jsonl")
    preds = select_predictions(predictions, tasks, instance_ids)  # read and checked first
    workers = workers or get_settings().workers
    run_id = run_id or default_run_id()
    on_interrupt(f"rerun with --run-id {run_id} to resume (finished instances are kept)")
    console = err if as_json else out
    with Progress("[progress.description]{task.description}", BarColumn(),
                  MofNCompleteColumn(), TimeElapsedColumn(), console=console,
                  transient=as_json) as bar:
        tid = bar.add_task("evaluating", total=len(preds))

        def progress(report: dict) -> None:
            bar.advance(tid)
            mark = "[green]resolved[/green]" if report["resolved"] else (
                f"[yellow]{report['failure_kind']}[/yellow]"
                if report["failure_kind"] != "NONE" else "[red]unresolved[/red]")
            bar.console.log(f"{report['instance_id']}: {mark}", highlight=False)

        summary = evaluate(preds, tasks=tasks, run_id=run_id, workers=workers,
                           timeout=timeout, instance_ids=instance_ids, force=force,
                           progress=progress, executor=make_executor(
                               executor, workers, log=bar.console.log, force=force))
    if as_json:
        emit_json(summary.model_dump(mode="json"))
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




@command
def runs_ls(
    kind: Optional[str] = typer.Option(None, "--kind", help="eval, validate, build, ..."),
    target: Optional[str] = typer.Option(None, "--target", help="an instance or task id"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable output"),
) -> None:
    """List the runs the registry records (evaluations, validations, builds)."""
    from envs.registry import Registry

    with Registry() as reg:
        runs = reg.list_runs(kind=kind, target=target)
    rows = [{"run_id": r.run_id, "kind": r.kind, "target": r.target, "status": r.status.value,
             "resolved": r.resolved, "failure_kind": r.failure_kind.value,
             "finished_at": r.finished_at} for r in runs]
    if as_json:
        emit_json(rows)
        return
    table = Table(title=f"{len(rows)} run(s)")
    for col in ("run_id", "kind", "target", "status", "resolved", "failure kind"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(r["run_id"], r["kind"], r["target"], r["status"], str(r["resolved"]),
                      r["failure_kind"])
    out.print(table)


@command
def runs_show(
    run_id: str = typer.Argument(..., help="an eval run id (its summary) or a run record id"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable output"),
) -> None:
    """Show an evaluation run's summary (runs/<run_id>/report.json), or one run record."""
    import json

    from envs.registry import Registry

    summary = get_settings().runs_dir / run_id / "report.json"
    data: Any
    if "/" not in run_id and summary.is_file():
        data = json.loads(summary.read_text(encoding="utf-8"))
    else:
        with Registry() as reg:
            record = reg.get_run(run_id)
        if record is None:
            raise UserError(f"no run {run_id!r} (no {summary}, no run record)")
        data = record.model_dump(mode="json")
    if as_json:
        emit_json(data)
        return
    print_fields(run_id, data, limit=400)
