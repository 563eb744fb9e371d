"""Import SWE-bench-style instance files: build each instance's environment, validate it,
and report whether envfactory's FAIL_TO_PASS / PASS_TO_PASS agree with the file's.

    report = import_instances(Path("instances.jsonl"), repos=Path("mirrors"), log=print)
    for row in report.instances:
        row.instance_id, row.status, row.error, row.fail_to_pass.relation   # "exact", ...
    report.summary()     # {"read": n, "agree": n, "disagree": n, "error": n, ...}

Input: JSONL (or a JSON array) of rows in SWE-bench / SWE-bench Multilingual / SWE-Gym
form: ``instance_id``, ``repo`` ("owner/name"), ``base_commit``, ``patch``,
``test_patch``, ``problem_statement``, ... with FAIL_TO_PASS / PASS_TO_PASS as JSON
strings or lists; fields envfactory does not know are ignored. Nothing about the
environment is taken from the file (no specs, images or eval scripts): envfactory detects,
plans and builds it itself (`repolaunch.build.launch` at ``base_commit``,
``run_tests=False``) and derives the test lists itself (`repolaunch.validate.validate`).

Repositories: with ``repos=DIR`` each is looked up there as ``owner/name`` or
``owner__name``, ``.git`` optional, a clone or a bare mirror (`git clone --bare` /
``--mirror``); otherwise (or when it is not there) it is cloned once from
``{clone_base}/owner/name.git`` into ``$ENVFACTORY_HOME/repos/owner__name.git``. An
instance that cannot be read, found, cloned, built or validated gets a one-line ``error``
and the run goes on with the next one.

Agreement, per list: ``exact`` (same set), ``subset`` (ours is a strict subset of the
file's), ``superset``, ``overlap`` (some in common) or ``disjoint``; with the counts and the
ids only one side has.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from envs.models import SWETask
from repolaunch.mine.github import find_repo

__all__ = ["Agreement", "ImportReport", "InstanceReport", "agreement", "import_instances",
           "locate_repo", "read_instances"]

Log = Callable[[str], None]
Relation = Literal["exact", "subset", "superset", "overlap", "disjoint"]
Status = Literal["agree", "disagree", "rejected", "built", "found", "error"]


class InstanceError(RuntimeError):
    """One instance cannot go on; the message is the one-line reason."""


class Agreement(BaseModel):
    relation: Relation
    ours: int
    theirs: int
    both: int
    only_ours: list[str] = Field(default_factory=list)
    only_theirs: list[str] = Field(default_factory=list)


def agreement(ours: list[str], theirs: list[str]) -> Agreement:
    a, b = set(ours), set(theirs)
    both = a & b
    relation: Relation
    if a == b:
        relation = "exact"
    elif a < b:
        relation = "subset"
    elif a > b:
        relation = "superset"
    elif both:
        relation = "overlap"
    else:
        relation = "disjoint"
    return Agreement(relation=relation, ours=len(a), theirs=len(b), both=len(both),
                     only_ours=sorted(a - b), only_theirs=sorted(b - a))


class InstanceReport(BaseModel):
    instance_id: str
    repo: str = ""
    status: Status
    error: str | None = None  # one line, for status "error"
    repo_path: str | None = None
    env_image: str | None = None
    verified: bool | None = None
    reason: str | None = None  # validation's reason code when not verified
    fail_to_pass: Agreement | None = None
    pass_to_pass: Agreement | None = None
    seconds: float = 0.0


class ImportReport(BaseModel):
    path: str
    instances: list[InstanceReport] = Field(default_factory=list)
    validate_available: bool = True

    def summary(self) -> dict[str, int]:
        c = Counter(r.status for r in self.instances)
        out = {"read": len(self.instances), **{k: c.get(k, 0) for k in
               ("agree", "disagree", "rejected", "built", "found", "error")}}
        for side in ("fail_to_pass", "pass_to_pass"):
            rel = Counter(getattr(r, side).relation for r in self.instances
                          if getattr(r, side) is not None)
            out.update({f"{side}_{k}": v for k, v in sorted(rel.items())})
        return out

    def errors(self) -> list[str]:
        return [f"{r.instance_id}: {r.error}" for r in self.instances if r.status == "error"]


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


# --------------------------------------------------------------------------- repositories


def _git(*args: str, cwd: Path | None = None, timeout: float = 900) -> str:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}  # fail, never prompt for credentials
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                              env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise InstanceError(f"git {args[0]} timed out after {timeout:.0f}s") from None
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        raise InstanceError(f"git {args[0]} failed: {last[:200]}")
    return proc.stdout


def locate_repo(full_name: str, *, repos: Path | None, cache: Path, clone_base: str,
                log: Log) -> Path:
    """A local clone or mirror of ``owner/name``: under ``repos``, in the cache, or cloned."""
    if "/" not in full_name:
        raise InstanceError(f"repo {full_name!r} is not owner/name")
    if repos is not None and (found := find_repo(Path(repos), full_name)) is not None:
        return found
    if (found := find_repo(cache, full_name)) is not None:
        return found
    url = f"{clone_base.rstrip('/')}/{full_name}.git"
    dest = cache / f"{full_name.replace('/', '__')}.git"
    where = f"not under {repos}; " if repos is not None else ""
    log(f"cloning {url} ...")
    cache.mkdir(parents=True, exist_ok=True)
    try:
        _git("clone", "-q", "--bare", url, str(dest))
    except InstanceError as exc:
        raise InstanceError(f"{where}clone of {url} failed: {str(exc).split(': ', 1)[-1]}"
                           ) from None
    return dest


def _check_commit(repo: Path, sha: str) -> None:
    try:
        _git("cat-file", "-e", f"{sha}^{{commit}}", cwd=repo, timeout=60)
    except InstanceError:
        raise InstanceError(f"base commit {sha[:12]} is not in {repo}") from None


# --------------------------------------------------------------------------- the import


def _default_launch(repo: Path, commit: str, log: Log, registry: Any) -> tuple[Any, str, str]:
    """(env, per-test command, env image) from envfactory's own build."""
    from repolaunch.build import LaunchError, launch

    try:
        res = launch(repo, commit=commit, run_tests=False, log=log, registry=registry)
    except LaunchError as exc:
        raise InstanceError(f"build failed: {str(exc).splitlines()[0][:200]}") from None
    if not res.ok or res.env is None:
        why = (res.failure or "the environment did not build").splitlines()[0][:200]
        raise InstanceError(f"build failed: {why}")
    return res.env, res.plan.per_test_command, res.env.image or ""


def _load_validate() -> Callable[..., Any] | None:
    try:
        from repolaunch.validate import validate
    except ImportError:
        return None
    return validate


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
    runs_before: int = 2,
    runs_after: int = 3,
    confirm_runs: int = 3,
    timeout: float | None = None,
    log: Log = lambda m: None,
    launcher: Callable[[Path, str, Log, Any], tuple[Any, str, str]] | None = None,
    validator: Callable[..., Any] | None = None,
) -> ImportReport:
    """Read, locate, build and validate every instance of an instance file; see the module.

    ``build=False`` stops after finding each repository and its base commit (status
    "found"); ``validate=False`` after the build ("built"). ``register``: put verified
    tasks (with envfactory's own test lists and env spec) in the registry.
    ``launcher`` / ``validator`` replace `launch` / `validate` (tests).
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
            t0 = time.monotonic()
            if isinstance(item, str):
                row = InstanceReport(instance_id=label, status="error", error=item)
            else:
                row = _one(item, repos=repos, cache=cache, clone_base=clone_base,
                           build=build, run_validate=run_validate, launch_fn=launch_fn,
                           register=register, reg=reg, log=log,
                           vkw={"runs_before": runs_before, "runs_after": runs_after,
                                "confirm_runs": confirm_runs, "timeout": timeout})
            row.seconds = round(time.monotonic() - t0, 1)
            if row.status == "error":
                log(f"{row.instance_id}: error: {row.error}")
            else:
                log(f"{row.instance_id}: {row.status}")
            report.instances.append(row)
    finally:
        if own and reg is not None:
            reg.close()
    return report


def _one(task: SWETask, *, repos: Path | None, cache: Path, clone_base: str, build: bool,
         run_validate: Callable[..., Any] | None,
         launch_fn: Callable[[Path, str, Log, Any], tuple[Any, str, str]], register: bool,
         reg: Any, log: Log, vkw: dict[str, Any]) -> InstanceReport:
    row = InstanceReport(instance_id=task.instance_id, repo=task.repo, status="error")
    try:
        repo = locate_repo(task.repo, repos=repos, cache=cache, clone_base=clone_base, log=log)
        row.repo_path = str(repo)
        _check_commit(repo, task.base_commit)
        if not build:
            row.status = "found"
            return row
        env, per_test, image = launch_fn(repo, task.base_commit, log, reg)
        row.env_image = image or None
        if run_validate is None:
            row.status = "built"
            return row
        # envfactory's own verdict: nothing of the file's test lists or specs goes in
        candidate = task.model_copy(update={"FAIL_TO_PASS": [], "PASS_TO_PASS": [],
                                            "env_spec": None})
        try:
            v = run_validate(candidate, env, per_test_command=per_test or None, log=log, **vkw)
        except Exception as exc:
            raise InstanceError(f"validation failed: {type(exc).__name__}: "
                               f"{str(exc).splitlines()[0][:200] if str(exc) else ''}") from None
        row.verified, row.reason = bool(v.verified), v.reason
        row.fail_to_pass = agreement(list(v.fail_to_pass), task.FAIL_TO_PASS)
        row.pass_to_pass = agreement(list(v.pass_to_pass), task.PASS_TO_PASS)
        if not v.verified:
            row.status = "rejected"
        elif row.fail_to_pass.relation == "exact" and row.pass_to_pass.relation == "exact":
            row.status = "agree"
        else:
            row.status = "disagree"
        if register and v.verified and reg is not None:
            reg.put_swe_task(v.task)
        return row
    except InstanceError as exc:
        row.status, row.error = "error", str(exc)
        return row
