"""The RepoLaunch sub-app: `mine` (repository -> verified tasks) and `registry` (ls, show,
export, import). Mounted by envfactory/cli.py; the logic lives in repolaunch.pipeline.

Every command takes --json (stdout then carries only JSON; progress goes to stderr) and
exits non-zero with a one-line reason on failure.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table

from envs.clikit import command, emit_json, err, on_interrupt, out, print_fields
from envs.errors import UserError
from envs.files import atomic_write
from harness.executor import queue_runner

app = typer.Typer(help="Mine, validate and register SWE tasks.", no_args_is_help=True,
                  add_completion=False, pretty_exceptions_enable=False)
registry_app = typer.Typer(help="Registered SWE tasks: list, show, export, import.",
                           no_args_is_help=True)
app.add_typer(registry_app, name="registry")

# --------------------------------------------------------------------------- mine


def _check_repository(path: Path) -> None:
    import git

    try:
        git.Repo(path)
    except git.NoSuchPathError:
        raise UserError("no such repository", where=str(path)) from None
    except git.InvalidGitRepositoryError:
        raise UserError("not a git repository", where=str(path)) from None


@app.command("mine")
@command
def mine_cmd(
    repo: Optional[Path] = typer.Argument(None, help="a local git repository "
                                          "(or use --github)"),
    github: Optional[str] = typer.Option(None, "--github", metavar="OWNER/NAME",
                                         help="mine merged pull requests through the GitHub "
                                         "API instead (token: GITHUB_TOKEN)"),
    api_url: str = typer.Option("https://api.github.com", "--api-url",
                                help="GitHub API base URL (GitHub Enterprise, the stand-in)"),
    clone_dir: Optional[Path] = typer.Option(None, "--clone-dir",
                                             help="clones/mirrors laid out owner/name or "
                                             "owner__name (default: <home>/repos)"),
    state: Optional[Path] = typer.Option(None, "--state",
                                         help="resume file for --github mining (JSONL)"),
    issues: Optional[Path] = typer.Option(None, "--issues",
                                          help="issues export (JSONL: number/title/body/comments)"),
    runs_before: int = typer.Option(2, "--runs-before", min=1,
                                    help="suite runs before the fix"),
    runs_after: int = typer.Option(3, "--runs-after", min=1, help="suite runs after the fix"),
    limit: Optional[int] = typer.Option(None, "--limit", min=1,
                                        help="validate at most N candidates"),
    newest: bool = typer.Option(False, "--newest",
                                help="with --limit: the newest N candidates, not the oldest"),
    timeout: Optional[float] = typer.Option(None, "--timeout", help="seconds per test run"),
    executor: Optional[str] = typer.Option(None, "--executor", help="where validations run: "
                                           "local (here) or celery (`envfactory worker` "
                                           "processes; default: ENVFACTORY_EXECUTOR)"),
    resume: bool = typer.Option(True, "--resume/--no-resume",
                                help="skip candidates validated by an earlier run"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable output"),
) -> None:
    """Mine a repository, build and validate its candidates, register the verified tasks.
    Resumable: a rerun skips the candidates an interrupted run validated."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from repolaunch.pipeline import TaskOutcome, mine_and_validate

    # The checks that cost nothing, before any clone, API call or build.
    if github and repo is not None:
        raise UserError("give a repository path or --github OWNER/NAME, not both")
    if github and not re.fullmatch(r"[A-Za-z0-9][\w.-]*/[\w.-]+", github):
        raise UserError("expected OWNER/NAME", field="--github", value=github)
    if repo is not None:
        _check_repository(repo)
    if issues is not None and not issues.is_file():
        raise UserError("no such issues file", field="--issues", value=str(issues))
    on_interrupt("rerun the same command to resume (validated candidates are kept"
                 + (f"; --state {state} keeps the GitHub mining" if state else "") + ")")
    mined = None
    if github:
        from envs.config import get_settings
        from repolaunch.mine.github import find_repo, mine_github

        root = clone_dir or get_settings().home / "repos"
        console_ = err if as_json else out
        with console_.status(f"mining {github} through {api_url} ..."):
            mined = mine_github(github, base_url=api_url, clone_dir=root, state=state,
                                log=lambda m: None if as_json else console_.log(m))
        repo = find_repo(root, github)
        if repo is None:  # pragma: no cover - mine_github just made it
            raise UserError(f"no clone of {github} under {root}")
    if repo is None:
        raise UserError("give a repository path or --github OWNER/NAME")
    console = err if as_json else out
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   console=console, transient=True)
    job: list[Any] = []

    def progress(event: str, task: Any, outcome: TaskOutcome | None) -> None:
        if not job:
            return
        if event == "start":
            bar.update(job[0], description=f"validating {task.instance_id}")
        else:
            bar.advance(job[0])
            assert outcome is not None
            verdict = "[green]verified[/green]" if outcome.verified else \
                f"[yellow]{outcome.reason}[/yellow]"
            console.print(f"  {task.instance_id}: {verdict} "
                          f"({len(outcome.fail_to_pass)} F2P, {outcome.seconds:.0f}s)",
                          highlight=False)

    def log(msg: str) -> None:
        if msg.startswith("mined "):
            n = int(msg.split(": ", 1)[1].split(" ", 1)[0])
            job.append(bar.add_task("validating", total=n))
        if not msg.startswith("  "):  # per-run lines are for the registry, not the screen
            console.log(msg, highlight=False)

    with bar:
        report = mine_and_validate(repo, issues=issues, log=log, progress=progress,
                                   runs_before=runs_before, runs_after=runs_after, limit=limit,
                                   newest=newest, timeout=timeout, mined=mined,
                                   runner=queue_runner(executor, log=console.log),
                                   resume=resume)
    if as_json:
        emit_json({**report.model_dump(mode="json"), "yield": dict(report.rows())})
    else:
        table = Table(title=f"yield: {report.repo}")
        table.add_column("stage")
        table.add_column("count", justify="right")
        for stage, n in report.rows():
            table.add_row(stage, str(n))
        out.print(table)
        out.print(f"{report.verified} verified task(s) registered in {report.seconds:.0f}s")


# --------------------------------------------------------------------------- registry


def _registry() -> Any:
    from envs.registry import Registry

    return Registry()


@registry_app.command("ls")
@command
def registry_ls(
    repo: Optional[str] = typer.Option(None, "--repo", help="only tasks of this repo"),
    language: Optional[str] = typer.Option(None, "--language", help="only this language"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable output"),
) -> None:
    """List the registered SWE tasks."""
    with _registry() as reg:
        tasks = reg.list_swe_tasks(repo=repo, language=language)
    rows = [{"instance_id": t.instance_id, "repo": t.repo,
             "language": t.language.value if t.language else None, "kind": t.kind.value,
             "base_commit": t.base_commit, "FAIL_TO_PASS": len(t.FAIL_TO_PASS),
             "PASS_TO_PASS": len(t.PASS_TO_PASS),
             "image": t.env_spec.image if t.env_spec else None} for t in tasks]
    if as_json:
        emit_json(rows)
        return
    table = Table(title=f"{len(rows)} SWE task(s)")
    for col in ("instance_id", "repo", "language", "kind", "F2P", "P2P", "image"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(r["instance_id"], r["repo"], str(r["language"]), r["kind"],
                      str(r["FAIL_TO_PASS"]), str(r["PASS_TO_PASS"]), str(r["image"]))
    out.print(table)


@registry_app.command("show")
@command
def registry_show(
    instance_id: str = typer.Argument(..., help="the task's instance id"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable output"),
) -> None:
    """Show one registered SWE task."""
    with _registry() as reg:
        task = reg.get_swe_task(instance_id)
    if task is None:
        raise UserError(f"no task {instance_id!r} in the registry")
    data = task.model_dump(mode="json")
    if as_json:
        emit_json(data)
        return
    fields = [(k, data.get(k)) for k in ("repo", "base_commit", "language", "kind",
                                         "issue_numbers", "pr_number", "created_at",
                                         "FAIL_TO_PASS", "PASS_TO_PASS")]
    if task.env_spec:
        fields += [("image", task.env_spec.image), ("test_command", task.env_spec.test_command)]
    print_fields(instance_id, [*fields, ("problem_statement", task.problem_statement)])


@registry_app.command("export")
@command
def registry_export(
    fmt: str = typer.Option("swebench", "--format", help="export format (swebench)"),
    out_file: Optional[Path] = typer.Option(None, "--out", help="JSONL file (default stdout)"),
    repo: Optional[str] = typer.Option(None, "--repo", help="only tasks of this repo"),
    as_json: bool = typer.Option(False, "--json",
                                 help="print a JSON summary (with --out; without, the JSONL "
                                      "itself is the output)"),
) -> None:
    """Export registered tasks as HF-compatible JSONL (SWE-bench field names)."""
    from repolaunch.pipeline import EXPORT_FORMATS, export_row

    if fmt not in EXPORT_FORMATS:
        raise UserError(f"unknown export format {fmt!r} (known: {', '.join(EXPORT_FORMATS)})")
    with _registry() as reg:
        tasks = reg.list_swe_tasks(repo=repo)
    text = "".join(json.dumps(export_row(t), sort_keys=True) + "\n" for t in tasks)
    if out_file is None:
        sys.stdout.write(text)
        return
    out_file.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(out_file, text)
    if as_json:
        emit_json({"exported": len(tasks), "format": fmt, "out": str(out_file)})
    else:
        out.print(f"exported {len(tasks)} task(s) to {out_file}")


@registry_app.command("import")
@command
def registry_import(
    file: Path = typer.Argument(..., help="a JSONL export (or SWE-bench-style rows)"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable output"),
) -> None:
    """Import tasks from a JSONL export into the registry (an upsert by instance id)."""
    from envs.files import read_jsonl
    from repolaunch.pipeline import import_row

    # Every row is read and checked first; then all land in one transaction, or none do.
    tasks = [import_row(row, where) for where, row in read_jsonl(file)]
    with _registry() as reg:
        reg.put_swe_tasks(tasks)
    ids = [t.instance_id for t in tasks]
    if as_json:
        emit_json({"imported": len(ids), "instance_ids": ids})
    else:
        out.print(f"imported {len(ids)} task(s) from {file}")
