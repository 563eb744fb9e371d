"""The `tasks` noun: SWE tasks and terminal tasks together.

    tasks ls [--kind swe|terminal]      tasks show ID      tasks export --format F
    tasks import FILE.jsonl | DIR...    tasks import FILE.jsonl --build (the SWE-bench importer)
    tasks mine ...   tasks synth ...   tasks families     (repolaunch.cli, synth.cli)

The old spellings (`registry ...`, `synth ls|export|import`, `import`) stay as hidden aliases
of one release; envfactory/cli.py mounts both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table

from envs.clikit import command, emit_json, logger, on_interrupt, out, print_fields
from envs.errors import EnvfactoryError, UserError, unknown

KINDS = ("swe", "terminal")
SWE_FORMATS = ("swebench",)
TERMINAL_FORMATS = ("harbor", "tb1")


def _registry() -> Any:
    from envs.registry import Registry

    return Registry()


@command
def tasks_ls(
    kind: Optional[str] = typer.Option(None, "--kind", help="swe or terminal (default: both)"),
    repo: Optional[str] = typer.Option(None, "--repo", help="SWE tasks of this repository"),
    family: Optional[str] = typer.Option(None, "--family", help="terminal tasks of a family"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable output"),
) -> None:
    """List the registered tasks, both kinds."""
    if kind is not None and kind not in KINDS:
        raise unknown("task kind", kind, KINDS, field="--kind")
    rows: list[dict[str, Any]] = []
    with _registry() as reg:
        if kind in (None, "swe") and family is None:
            rows += [{"id": t.instance_id, "kind": "swe", "source": t.repo,
                      "language": t.language.value if t.language else None,
                      "tests": len(t.FAIL_TO_PASS) + len(t.PASS_TO_PASS),
                      "image": t.env_spec.image if t.env_spec else None}
                     for t in reg.list_swe_tasks(repo=repo)]
        if kind in (None, "terminal") and repo is None:
            rows += [{"id": t.task_id, "kind": "terminal", "source": t.family,
                      "language": t.category, "tests": len(t.tests), "image": t.image}
                     for t in reg.list_terminal_tasks(family=family)]
    if as_json:
        emit_json(rows)
        return
    table = Table(title=f"{len(rows)} task(s)")
    for col in ("id", "kind", "repository / family", "language / category", "image"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(r["id"], r["kind"], r["source"], str(r["language"]), str(r["image"]))
    out.print(table)


@command
def tasks_show(
    task_id: str = typer.Argument(..., help="an instance id or a terminal task id"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable output"),
) -> None:
    """Show one registered task, of either kind."""
    with _registry() as reg:
        task: Any = reg.get_swe_task(task_id) or reg.get_terminal_task(task_id)
    if task is None:
        raise UserError(f"no task {task_id!r} in the registry")
    data = task.model_dump(mode="json")
    if as_json:
        emit_json(data)
        return
    long = ("patch", "test_patch", "files", "tests", "solution", "mutants", "dockerfile")
    print_fields(task_id, [(k, f"({len(str(v))} characters)" if k in long else v)
                           for k, v in data.items()])


@command
def tasks_export(
    fmt: str = typer.Option(..., "--format", help="swebench (SWE tasks as JSONL), harbor or "
                            "tb1 (terminal tasks as directories)"),
    dest: Optional[Path] = typer.Option(None, "--out", "-o", help="a JSONL file (swebench; "
                                        "default stdout) or a directory (harbor, tb1)"),
    repo: Optional[str] = typer.Option(None, "--repo", help="SWE tasks of this repository"),
    family: Optional[str] = typer.Option(None, "--family", help="terminal tasks of a family"),
    as_json: bool = typer.Option(False, "--json", help="print a JSON summary"),
) -> None:
    """Export registered tasks: SWE tasks as SWE-bench JSONL, terminal tasks as Harbor or
    Terminal-Bench 1 directories."""
    from repolaunch.cli import registry_export
    from synth.cli import export_cmd

    if fmt in SWE_FORMATS:
        registry_export(fmt=fmt, out_file=dest, repo=repo, as_json=as_json)
    elif fmt in TERMINAL_FORMATS:
        if dest is None:
            raise UserError(f"a directory is needed for {fmt}", field="--out")
        export_cmd(dest=dest, fmt=fmt, family=family, task_id=None, as_json=as_json)
    else:
        raise unknown("export format", fmt, SWE_FORMATS + TERMINAL_FORMATS, field="--format")


@command
def tasks_import(
    paths: list[Path] = typer.Argument(..., help="a JSONL of SWE tasks (an export, or "
                                       "SWE-bench instances with --build), or Harbor / TB1 "
                                       "task directories"),
    build: bool = typer.Option(False, "--build", help="SWE-bench instances: build each "
                               "environment, validate, compare the test lists (see "
                               "`tasks import --build --help`... options below)"),
    repos: Optional[Path] = typer.Option(None, "--repos", help="with --build: clones or "
                                         "mirrors, laid out owner/name or owner__name"),
    register: bool = typer.Option(False, "--register", help="with --build: register the "
                                  "verified tasks"),
    instance_ids: Optional[list[str]] = typer.Option(None, "--instance-id", "-i"),
    limit: Optional[int] = typer.Option(None, min=1, help="with --build: at most this many"),
    state: Optional[Path] = typer.Option(None, "--state", help="with --build: a state file "
                                         "that makes the run resumable"),
    whole_suite: bool = typer.Option(False, "--whole-suite", help="with --build: every "
                                     "test, not SWE-bench's scope"),
    timeout: Optional[float] = typer.Option(None, "--timeout", help="seconds per test run"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable output"),
) -> None:
    """Add tasks to the registry: a JSONL file is stored as it is (one transaction), task
    directories are verified through every gate first, and `--build` builds SWE-bench
    instances' environments itself."""
    from repolaunch.cli import registry_import
    from synth.cli import import_cmd as terminal_import

    dirs = [p for p in paths if p.is_dir()]
    if dirs and len(dirs) != len(paths):
        raise UserError("give task directories or one JSONL file, not both")
    if dirs:
        if build:
            raise UserError("--build takes a JSONL of SWE-bench instances, not directories")
        terminal_import(paths=paths, as_json=as_json)
        return
    if len(paths) != 1:
        raise UserError(f"one JSONL file at a time, got {len(paths)}")
    if build:
        build_import(path=paths[0], repos=repos, register=register, instance_ids=instance_ids,
                     limit=limit, state=state, whole_suite=whole_suite, timeout=timeout,
                     as_json=as_json)
    else:
        registry_import(file=paths[0], as_json=as_json)


@command
def build_import(
    path: Path = typer.Argument(..., help="SWE-bench-style instance JSONL (or JSON array)"),
    repos: Optional[Path] = typer.Option(None, "--repos", help="directory of clones or bare "
                                         "mirrors, laid out owner/name or owner__name"),
    register: bool = typer.Option(False, "--register", help="register the verified tasks"),
    instance_ids: Optional[list[str]] = typer.Option(None, "--instance-id", "-i"),
    limit: Optional[int] = typer.Option(None, min=1, help="at most this many instances"),
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
        raise UserError("no such file", where=str(path))
    if repos is not None and not repos.is_dir():
        raise UserError("no such directory", field="--repos", value=str(repos))
    if state is not None:
        on_interrupt(f"rerun with the same --state {state} to resume")
    report = import_instances(path, repos=repos, register=register, instance_ids=instance_ids,
                              limit=limit, state=state, whole_suite=whole_suite,
                              timeout=timeout, log=logger(as_json))
    if as_json:
        emit_json({**report.model_dump(mode="json"), "summary": report.summary(),
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
        raise EnvfactoryError(f"{len(errors)} instance(s) failed, first: {errors[0]}")


