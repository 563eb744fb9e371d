"""Import SWE-bench-style instance files: build each instance's environment, validate it,
and report whether envfactory's FAIL_TO_PASS / PASS_TO_PASS agree with the file's.

    report = import_instances(Path("instances.jsonl"), repos=Path("mirrors"), log=print)
    for row in report.instances:
        row.instance_id, row.status, row.cause, row.fail_to_pass.relation   # "exact", ...
    report.summary()     # {"read": n, "agree": n, "disagree": n, "error": n, ...}

Input: JSONL (or a JSON array) of rows in SWE-bench / SWE-bench Multilingual / SWE-Gym
form: ``instance_id``, ``repo`` ("owner/name"), ``base_commit``, ``patch``,
``test_patch``, ``problem_statement``, ... with FAIL_TO_PASS / PASS_TO_PASS as JSON
strings or lists; fields envfactory does not know are ignored. Nothing about the
environment is taken from the file (no specs, images or eval scripts): envfactory detects,
plans and builds it itself (`repolaunch.build.launch` at ``base_commit``,
``run_tests=False``, the test patch's files collected at build time so a runner that cannot
start is diagnosed there) and derives the test lists itself (`repolaunch.validate.validate`)
the way SWE-bench did: the test patch's test files only (`files_under_test`), read with
SWE-bench's semantics and its ids (``reading="swebench"``). Lists are compared in
`reports.comparable_id` form.

Every instance that does not come out with FAIL_TO_PASS identical to the file's gets a
typed `Cause` (see `CAUSES`); the build transcript and every validation run's output are
kept under ``$ENVFACTORY_HOME/logs/import/<instance_id>/``. ``state=FILE`` makes a run
resumable: each finished instance is appended there, and a rerun skips it (an
infrastructure failure is tried again). Sandboxes left by a killed import are removed when
the next one starts.

Repositories: with ``repos=DIR`` each is looked up there as ``owner/name`` or
``owner__name``, ``.git`` optional, a clone or a bare mirror (`git clone --bare` /
``--mirror``); otherwise (or when it is not there) it is cloned once from
``{clone_base}/owner/name.git`` into ``$ENVFACTORY_HOME/repos/owner__name.git``. An
instance that cannot be read, found, cloned, built or validated gets a one-line ``error``
and the run goes on with the next one.

Agreement, per list: ``exact`` (same set), ``subset`` (ours is a strict subset of the
file's), ``superset``, ``overlap`` (some in common) or ``disjoint``; with the counts and the
ids only one side has.

This module reads the file and runs the import; the report's models and `agreement` are in
`importer_report.py`, the typed causes in `importer_causes.py`, the repositories (located,
cloned, holes recovered) in `importer_repos.py`.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from envs.files import StateFile, input_key
from envs.models import SWETask
from repolaunch.importer_causes import (
    NETWORK_SENSITIVE,
    build_cause,
    f2p_cause,
    launch_cause,
    reached_for_network,
    unreachable,
    unreachable_in_build,
    unreachable_registry,
    validation_cause,
)
from repolaunch.importer_report import (  # noqa: F401  (the façade re-exports them)
    CAUSES,
    Agreement,
    Cause,
    ImportReport,
    InstanceError,
    InstanceReport,
    Relation,
    Status,
    agreement,
)
from repolaunch.importer_repos import check_commit, holes_at, locate_repo

__all__ = ["Agreement", "ImportReport", "InstanceReport", "agreement", "build_cause",
           "import_instances", "locate_repo", "read_instances", "unreachable_registry"]

Log = Callable[[str], None]
# the causes' old private names (tests import them from here)
_launch_cause, _unreachable, _unreachable_in_build = launch_cause, unreachable, unreachable_in_build

# SWE-bench leaves files with these endings out of the test command (NON_TEST_EXTS)
NON_TEST_EXTS = (".json", ".png", "csv", ".txt", ".md", ".jpg", ".jpeg", ".pkl", ".yml",
                 ".yaml", ".toml")


# --------------------------------------------------------------------------- reading


def read_instances(path: Path) -> Iterator[tuple[str, SWETask | str]]:
    """(label, task) per row, or (label, one-line error) for a row that cannot be read."""
    text = Path(path).read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        rows: list[tuple[int, Any]] = list(enumerate(json.loads(text), 1))
    else:
        rows = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rows.append((n, json.loads(line)))
            except json.JSONDecodeError as exc:
                rows.append((n, f"not JSON: {exc.msg} at column {exc.colno}"))
    for n, row in rows:
        if isinstance(row, str):
            yield f"line {n}", row
            continue
        label = str(row.get("instance_id") or f"line {n}") if isinstance(row, dict) else f"line {n}"
        try:
            yield label, SWETask.model_validate(row)
        except (ValidationError, ValueError) as exc:
            first = exc.errors()[0] if isinstance(exc, ValidationError) else {"msg": str(exc)}
            where = ".".join(str(x) for x in first.get("loc", ())) or "row"
            yield label, f"invalid instance: {where}: {first['msg']}"


# --------------------------------------------------------------------------- the import


def files_under_test(test_patch: str) -> list[str]:
    """The files SWE-bench runs: those the test patch touches, less NON_TEST_EXTS and
    deleted ones, in patch order."""
    from repolaunch.mine.github import parse_diff

    out = []
    for f in parse_diff(test_patch):
        gone = "\n+++ /dev/null" in f.section or "\ndeleted file mode" in f.section
        if not gone and not f.path.endswith(NON_TEST_EXTS) and f.path not in out:
            out.append(f.path)
    return out


class Launched(BaseModel):
    """What the import needs of a built environment."""

    env: Any
    per_test_command: str = ""
    scope_command: str = ""
    image: str = ""
    transcript: str | None = None


Launcher = Callable[..., Launched]


def _default_launch(repo: Path, commit: str, log: Log, registry: Any, *,
                    probe: list[str]) -> Launched:
    from envs.images import ImageBuildError
    from envs.sandbox import SandboxError
    from repolaunch.build import LaunchError, launch

    try:
        res = launch(repo, commit=commit, run_tests=False, probe_tests=probe, log=log,
                     registry=registry)
    except LaunchError as exc:
        raise InstanceError(f"build failed: {str(exc).splitlines()[0][:200]}",
                            "env_build_failed") from None
    except (ImageBuildError, SandboxError) as exc:
        raise InstanceError(f"build failed: {str(exc).splitlines()[0][:200]}") from None
    if not res.ok or res.env is None:
        cause, why = build_cause(res.failure, res.transcript)
        err = InstanceError(f"build failed: {why}", cause)
        err.transcript = res.transcript_path  # type: ignore[attr-defined]
        err.language = res.plan.language.value  # type: ignore[attr-defined]
        raise err
    return Launched(env=res.env, per_test_command=res.plan.per_test_command,
                    scope_command=res.plan.scope_command,
                    image=res.env.image or "", transcript=res.transcript_path)


def _load_validate() -> Callable[..., Any] | None:
    try:
        from repolaunch.validate import validate
    except ImportError:
        return None
    return validate


def _state(path: Path) -> StateFile:
    """The run's state: one InstanceReport per instance (keyed by its id, as files of
    earlier releases are), with a hash of the instance's inputs; an infrastructure failure,
    or an instance whose inputs changed, is done again."""
    return StateFile(path, key_field="instance_id",
                     retry=lambda r: r.get("cause") == "infrastructure")


def _inputs(item: SWETask | str, settings: dict[str, Any]) -> str:
    return input_key(item.model_dump(mode="json") if isinstance(item, SWETask) else item,
                     settings)


def import_instances(
    path: Path,
    *,
    repos: Path | None = None,
    clone_base: str = "https://github.com",
    cache: Path | None = None,
    build: bool = True,
    validate: bool = True,
    register: bool = False,
    registry: Any = None,
    instance_ids: list[str] | None = None,
    limit: int | None = None,
    runs_before: int = 1,
    runs_after: int = 1,
    confirm_runs: int = 1,
    timeout: float | None = None,
    whole_suite: bool = False,
    state: Path | None = None,
    log: Log = lambda m: None,
    launcher: Launcher | None = None,
    validator: Callable[..., Any] | None = None,
) -> ImportReport:
    """Read, locate, build and validate every instance of an instance file; see the module.

    ``build=False`` stops after finding each repository and its base commit (status
    "found"); ``validate=False`` after the build ("built"). ``register``: put verified
    tasks (with envfactory's own test lists and env spec) in the registry.
    ``whole_suite``: run every test, not the test patch's files. ``state``: a JSONL file
    that makes the run resumable. ``launcher`` / ``validator`` replace `launch` /
    `validate` (tests).
    """
    from envs.config import get_settings

    cache = Path(cache) if cache is not None else get_settings().home / "repos"
    run_validate = validator or (_load_validate() if validate else None)
    report = ImportReport(path=str(path), validate_available=_load_validate() is not None
                          or validator is not None)
    if validate and run_validate is None:
        log("repolaunch.validate is not available: building only")
    launch_fn = launcher or _default_launch
    wanted = set(instance_ids) if instance_ids else None
    store = _state(Path(state)) if state is not None else None
    vkw = {"runs_before": runs_before, "runs_after": runs_after, "confirm_runs": confirm_runs,
           "timeout": timeout}
    settings = {**vkw, "build": build, "validate": validate, "whole_suite": whole_suite}
    if build and launcher is None:
        _collect_leftovers(log)
    own = False
    reg = registry
    if reg is None and build and register:
        from envs.registry import Registry

        reg, own = Registry(), True
    try:
        for label, item in read_instances(Path(path)):
            if wanted is not None and label not in wanted:
                continue
            if limit is not None and len(report.instances) >= limit:
                break
            inputs = _inputs(item, settings)
            prior = store.done(label) if store is not None else None
            if prior is not None and prior.get("inputs", inputs) == inputs:
                report.instances.append(InstanceReport.model_validate(
                    {k: v for k, v in prior.items() if k != "inputs"}))
                log(f"{label}: {prior['status']} (from {state})")
                continue
            t0 = time.monotonic()
            if isinstance(item, str):
                row = InstanceReport(instance_id=label, status="error", error=item,
                                     cause="invalid_instance")
            else:
                row = _one(item, repos=repos, cache=cache, clone_base=clone_base,
                           build=build, run_validate=run_validate, launch_fn=launch_fn,
                           register=register, reg=reg, log=log, whole_suite=whole_suite,
                           vkw=vkw)
            row.seconds = round(time.monotonic() - t0, 1)
            if row.status == "error":
                log(f"{row.instance_id}: error ({row.cause}): {row.error}")
            else:
                log(f"{row.instance_id}: {row.status}" + (f" ({row.cause})" if row.cause
                                                          else ""))
            report.instances.append(row)
            if store is not None:
                store.put(label, {**row.model_dump(mode="json"), "inputs": inputs})
    finally:
        if own and reg is not None:
            reg.close()
    return report


def _collect_leftovers(log: Log) -> None:
    """Remove the sandboxes of imports that were killed (their owner process is gone)."""
    try:
        from envs.sandbox import gc

        removed = gc()
    except Exception as exc:  # no engine yet: the build reports it
        log(f"leftover sandboxes not collected: {str(exc).splitlines()[0][:120]}")
        return
    if removed:
        log(f"removed {len(removed)} sandbox(es) left by an interrupted run")


def _one(task: SWETask, *, repos: Path | None, cache: Path, clone_base: str, build: bool,
         run_validate: Callable[..., Any] | None, launch_fn: Launcher, register: bool,
         reg: Any, log: Log, whole_suite: bool, vkw: dict[str, Any]) -> InstanceReport:
    from envs import reports
    from envs.config import get_settings

    row = InstanceReport(instance_id=task.instance_id, repo=task.repo, status="error")
    logs = get_settings().logs_dir / "import" / re.sub(r"[^\w.-]+", "_", task.instance_id)
    row.log_dir = str(logs)
    try:
        repo = locate_repo(task.repo, repos=repos, cache=cache, clone_base=clone_base, log=log)
        row.repo_path = str(repo)
        check_commit(repo, task.base_commit)
        row.missing_files = holes_at(repo, task.base_commit, log)
        if not build:
            row.status = "found"
            return row
        files = files_under_test(task.test_patch)
        try:
            built = launch_fn(repo, task.base_commit, log, reg, probe=files)
        except InstanceError as exc:
            _keep_transcript(logs, getattr(exc, "transcript", None))
            row.language = getattr(exc, "language", None)
            raise
        _keep_transcript(logs, built.transcript)
        env = built.env
        row.env_image, row.built = built.image or None, True
        row.language = getattr(getattr(env, "language", None), "value", None)
        resolved = dict(getattr(env, "resolved", None) or {})
        row.python = resolved.get("#python")
        row.resolved_as_of = resolved.get("#resolved-as-of")
        row.install_set = resolved.get("#install-set")
        if run_validate is None:
            row.status = "built"
            return row
        # envfactory's own verdict: nothing of the file's test lists or specs goes in
        candidate = task.model_copy(update={"FAIL_TO_PASS": [], "PASS_TO_PASS": [],
                                            "env_spec": None})
        scope = None if whole_suite else files
        try:
            v = run_validate(candidate, env, per_test_command=built.per_test_command or None,
                             scope=scope, scope_command=built.scope_command or None,
                             reading="swebench", log_dir=logs / "validate",
                             log=log, **vkw)
        except Exception as exc:
            raise InstanceError(f"validation failed: {type(exc).__name__}: "
                                f"{str(exc).splitlines()[0][:200] if str(exc) else ''}"
                                ) from None
        fmt = getattr(env, "report_format", "pytest")
        form = functools.partial(reports.comparable_id, report_format=fmt)
        row.verified, row.reason, row.detail = bool(v.verified), v.reason, v.detail[:500]
        row.tests_ran = any(r.counts.get("total", 0) for r in v.runs)
        row.fail_to_pass = agreement(list(v.fail_to_pass), task.FAIL_TO_PASS, form=form)
        row.pass_to_pass = agreement(list(v.pass_to_pass), task.PASS_TO_PASS, form=form)
        if v.verified and v.task.env_spec is not None:
            row.test_command = v.task.env_spec.test_command
        if not v.verified:
            row.status = "rejected"
            row.cause = validation_cause(v.reason, v.detail, row.tests_ran)
        else:
            row.cause = f2p_cause(row.fail_to_pass.relation)
            exact = row.fail_to_pass.relation == row.pass_to_pass.relation == "exact"
            row.status = "agree" if exact else "disagree"
        if row.cause in NETWORK_SENSITIVE and reached_for_network(logs / "validate"):
            row.cause = "tests_need_network"
        host = unreachable_in_build(logs) if row.cause == "runner_failed" else None
        if host is not None:  # the setup went on without what the registry would have given
            row.cause = "registry_unavailable"
            row.detail = f"{host} (a registry this machine cannot reach); {row.detail}"[:500]
        if register and v.verified and reg is not None:
            reg.put_swe_task(v.task)
            row.registered = True
        return row
    except InstanceError as exc:
        row.status, row.error, row.cause = "error", str(exc), exc.cause
        return row


def _keep_transcript(logs: Path, transcript: str | None) -> None:
    """The build transcript (every setup command, exit code and output tail) beside the
    validation logs."""
    if not transcript or not Path(transcript).is_file():
        return
    logs.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(transcript, logs / "build.json")
