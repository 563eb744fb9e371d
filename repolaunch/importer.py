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
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from envs.models import SWETask
from repolaunch.mine.github import find_repo

__all__ = ["Agreement", "ImportReport", "InstanceReport", "agreement", "build_cause",
           "import_instances", "locate_repo", "read_instances", "unreachable_registry"]

Log = Callable[[str], None]
Relation = Literal["exact", "subset", "superset", "overlap", "disjoint"]
Status = Literal["agree", "disagree", "rejected", "built", "found", "error"]
Cause = Literal["invalid_instance", "repo_unavailable", "commit_unavailable",
                "env_build_failed", "toolchain_unavailable", "registry_unavailable",
                "runner_failed",
                "test_patch_failed", "patch_failed",
                "timeout", "no_fail_to_pass", "gold_breaks_tests", "fail_to_pass_missing",
                "fail_to_pass_extra", "fail_to_pass_differs", "tests_need_network",
                "infrastructure"]
CAUSES: dict[str, str] = {
    "invalid_instance": "the row cannot be read as an instance",
    "repo_unavailable": "the repository is neither under --repos nor clonable",
    "commit_unavailable": "the base commit is not in the repository",
    "env_build_failed": "the dependencies did not install",
    "toolchain_unavailable": "the code needs an interpreter or toolchain of an era no "
                             "Debian suite here has (Python before 3.9, for one)",
    "registry_unavailable": "a package registry the setup needs cannot be reached from here, "
                            "or no longer serves a pinned version (the host is named)",
    "runner_failed": "the environment built but its tests do not start or report nothing",
    "test_patch_failed": "the test patch does not apply at the base commit",
    "patch_failed": "the gold patch does not apply over the test patch",
    "timeout": "a test run went past its time limit",
    "no_fail_to_pass": "no test fails before the fix and passes after it",
    "gold_breaks_tests": "a test passing before the fix fails after it",
    "fail_to_pass_missing": "ours is a strict subset of the file's FAIL_TO_PASS",
    "fail_to_pass_extra": "ours is a strict superset of the file's FAIL_TO_PASS",
    "fail_to_pass_differs": "ours and the file's FAIL_TO_PASS overlap or are disjoint",
    "tests_need_network": "tests reached for the network, which validation denies (the "
                          "dataset's lists were made with it)",
    "infrastructure": "the engine or a sandbox failed (not the instance's fault; retried)",
}
# SWE-bench leaves files with these endings out of the test command (NON_TEST_EXTS)
NON_TEST_EXTS = (".json", ".png", "csv", ".txt", ".md", ".jpg", ".jpeg", ".pkl", ".yml",
                 ".yaml", ".toml")


class InstanceError(RuntimeError):
    """One instance cannot go on; the message is the one-line reason."""

    def __init__(self, message: str, cause: Cause = "infrastructure") -> None:
        super().__init__(message)
        self.cause: Cause = cause


class Agreement(BaseModel):
    relation: Relation
    ours: int
    theirs: int
    both: int
    only_ours: list[str] = Field(default_factory=list)
    only_theirs: list[str] = Field(default_factory=list)

    @property
    def jaccard(self) -> float:
        union = self.ours + self.theirs - self.both
        return 1.0 if union == 0 else round(self.both / union, 4)


def agreement(ours: list[str], theirs: list[str], *, form: Callable[[str], str] = str
              ) -> Agreement:
    """How our list relates to theirs, each id put in ``form`` first."""
    a, b = {form(t) for t in ours}, {form(t) for t in theirs}
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
    language: str | None = None  # what the checkout was detected as (when it got that far)
    status: Status
    cause: Cause | None = None  # why FAIL_TO_PASS is not identical (None: it is)
    error: str | None = None  # one line, for status "error"
    repo_path: str | None = None
    env_image: str | None = None
    built: bool = False  # an environment image exists for the instance
    tests_ran: bool = False  # some run reported per-test results
    python: str | None = None
    resolved_as_of: str | None = None  # what the environment really resolved as of
    install_set: str | None = None
    verified: bool | None = None
    reason: str | None = None  # validation's reason code when not verified
    detail: str = ""
    fail_to_pass: Agreement | None = None
    pass_to_pass: Agreement | None = None
    test_command: str | None = None
    registered: bool = False
    # files of the base commit the mirror lacks and no release carried: checked out empty
    missing_files: list[str] = Field(default_factory=list)
    log_dir: str | None = None
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

    def causes(self) -> dict[str, int]:
        return dict(Counter(r.cause for r in self.instances if r.cause).most_common())


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
        raise InstanceError(f"repo {full_name!r} is not owner/name", "invalid_instance")
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
        raise InstanceError(f"{where}clone of {url} failed: {str(exc).split(': ', 1)[-1]}",
                            "repo_unavailable") from None
    return dest


_REPAIRED: dict[str, dict[str, set[str]]] = {}  # repository -> blobs still missing


def _holes_at(repo: Path, commit: str, log: Log) -> list[str]:
    """Recover what a partial mirror lacks (once per repository and process), then name the
    files of the commit that are still missing."""
    from repolaunch import mirror

    key = str(Path(repo).resolve())
    if key not in _REPAIRED:
        holes = mirror.missing_blobs(Path(repo))
        if holes:
            log(f"{repo}: the mirror lacks {len(holes)} blob(s); looking for them in the "
                "project's releases")
            got = mirror.recover_from_pypi(Path(repo), holes, log=log)
            holes = {s: p for s, p in holes.items() if s not in got}
        _REPAIRED[key] = holes
    holes = _REPAIRED[key]
    if not holes:
        return []
    tree = subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", commit],
                          capture_output=True, text=True).stdout
    return sorted(line.split("\t", 1)[1] for line in tree.splitlines()
                  if "\t" in line and line.split()[2] in holes)


def _check_commit(repo: Path, sha: str) -> None:
    try:
        _git("cat-file", "-e", f"{sha}^{{commit}}", cwd=repo, timeout=60)
    except InstanceError:
        raise InstanceError(f"base commit {sha[:12]} is not in {repo}",
                            "commit_unavailable") from None


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


_INFRA_WORDS = ("sandbox", "engine", "docker", "image build", "cannot create", "died")


# A package registry that did not answer, or answered "not here", in a setup step's output:
# the host it was asked (curl/composer/bundler/npm/yarn/pip/cargo words for it).
_UNREACHABLE = re.compile(
    r"(?:Could not resolve host:?|Could not reach host|getaddrinfo \w+|Failed to connect to|"
    r"Couldn't connect to server|Failed to open TCP connection to|"
    r"Request URL: https?://|failed to download from|404 Not Found[^\n]*?https?://|"
    r"Git error: command `git clone [^`\n]*?https?://|Unknown host|UnknownHostException:|"
    r"Can't get https?://)"
    r"\s*(?:https?://)?([\w.-]+\.[a-z]{2,})")
_NOT_FOUND = re.compile(r"\b404\b|Not Found|Could not (?:resolve|reach) host|getaddrinfo|Git error|"
                        r"Unknown ?[Hh]ost|"
                        r"Failed to connect|Couldn't connect|Failed to open TCP connection")


def _unreachable(transcript: list[Any], *, failed_only: bool = True) -> str | None:
    """The registry host a failed setup step could not get something from, if its output
    says so (a host out of reach, or a package version it no longer serves).
    ``failed_only=False``: any setup step's, for a step whose fallback (``|| ...``) made
    it exit 0 without what the registry would have given."""
    def field(a: Any, name: str, default: Any) -> Any:
        return a.get(name, default) if isinstance(a, dict) else getattr(a, name, default)

    steps = [a for a in transcript if field(a, "phase", "") == "setup"
             and (not failed_only or field(a, "exit_code", 0) != 0)]
    for step in reversed(steps if not failed_only else steps[-1:]):
        tail = str(field(step, "output_tail", ""))[-20_000:]
        m = _UNREACHABLE.search(tail) if _NOT_FOUND.search(tail) else None
        if m:
            return m.group(1)
    return None


def unreachable_registry(transcript: list[Any]) -> str | None:
    """The registry host any setup step could not reach (its step may have gone on
    without it): for a build whose tests then fail or report nothing."""
    return _unreachable(transcript, failed_only=False)


def _unreachable_in_build(logs: Path) -> str | None:
    """`_unreachable` over every setup step of the build transcript kept in ``logs``."""
    try:
        data = json.loads((logs / "build.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    steps = data.get("transcript") if isinstance(data, dict) else None
    return unreachable_registry(steps) if isinstance(steps, list) else None


def build_cause(failure: str | None, transcript: list[Any]) -> tuple[Cause, str]:
    """Why a build failed, typed, and its one line (the registry host named where a setup
    step could not reach one): the same reading for imports and for launches at HEAD."""
    why = (failure or "the environment did not build").splitlines()[0][:300]
    cause = _launch_cause(why)
    host = _unreachable(transcript) if cause == "env_build_failed" else None
    if host is not None:
        return "registry_unavailable", f"{host} (a registry this machine cannot reach); {why}"
    return cause, why


def _launch_cause(failure: str) -> Cause:
    from repolaunch.build import UNAVAILABLE

    low = failure.lower()
    if UNAVAILABLE in low:
        return "toolchain_unavailable"
    if "test runner does not start" in low:
        return "runner_failed"
    if any(w in low for w in _INFRA_WORDS) and "setup failed" not in low:
        return "infrastructure"
    return "env_build_failed"


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


def _read_state(path: Path) -> dict[str, InstanceReport]:
    done: dict[str, InstanceReport] = {}
    if not path.is_file():
        return done
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            row = InstanceReport.model_validate_json(line)
        except ValueError:
            continue  # a line torn by an interrupted run
        done[row.instance_id] = row
    return done


def _append_state(path: Path, row: InstanceReport) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+", encoding="utf-8") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell():  # start on a fresh line even after a torn one
            fh.seek(fh.tell() - 1)
            if fh.read(1) != "\n":
                fh.write("\n")
        fh.write(row.model_dump_json() + "\n")
        fh.flush()
        os.fsync(fh.fileno())


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
    done = _read_state(Path(state)) if state is not None else {}
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
            prior = done.get(label)
            if prior is not None and prior.cause != "infrastructure":
                report.instances.append(prior)
                log(f"{label}: {prior.status} (from {state})")
                continue
            t0 = time.monotonic()
            if isinstance(item, str):
                row = InstanceReport(instance_id=label, status="error", error=item,
                                     cause="invalid_instance")
            else:
                row = _one(item, repos=repos, cache=cache, clone_base=clone_base,
                           build=build, run_validate=run_validate, launch_fn=launch_fn,
                           register=register, reg=reg, log=log, whole_suite=whole_suite,
                           vkw={"runs_before": runs_before, "runs_after": runs_after,
                                "confirm_runs": confirm_runs, "timeout": timeout})
            row.seconds = round(time.monotonic() - t0, 1)
            if row.status == "error":
                log(f"{row.instance_id}: error ({row.cause}): {row.error}")
            else:
                log(f"{row.instance_id}: {row.status}" + (f" ({row.cause})" if row.cause
                                                          else ""))
            report.instances.append(row)
            if state is not None:
                _append_state(Path(state), row)
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


def _f2p_cause(relation: Relation) -> Cause | None:
    return {"exact": None, "subset": "fail_to_pass_missing",
            "superset": "fail_to_pass_extra"}.get(relation, "fail_to_pass_differs")


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
        _check_commit(repo, task.base_commit)
        row.missing_files = _holes_at(repo, task.base_commit, log)
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
            row.cause = _validation_cause(v.reason, v.detail, row.tests_ran)
        else:
            row.cause = _f2p_cause(row.fail_to_pass.relation)
            exact = row.fail_to_pass.relation == row.pass_to_pass.relation == "exact"
            row.status = "agree" if exact else "disagree"
        if row.cause in _NETWORK_SENSITIVE and _reached_for_network(logs / "validate"):
            row.cause = "tests_need_network"
        host = _unreachable_in_build(logs) if row.cause == "runner_failed" else None
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


# causes that tests failing for want of the network can produce
_NETWORK_SENSITIVE = ("no_fail_to_pass", "fail_to_pass_missing", "fail_to_pass_differs",
                      "runner_failed")


def _reached_for_network(log_dir: Path) -> bool:
    from repolaunch.diagnose import needs_network

    return any(needs_network(p.read_text(encoding="utf-8", errors="replace"))
               for p in sorted(log_dir.glob("*.log")))


def _validation_cause(reason: str | None, detail: str, tests_ran: bool) -> Cause:
    if reason == "env_build_failed":
        return "infrastructure" if detail.startswith("sandbox") else "runner_failed"
    if reason in ("test_patch_failed", "patch_failed", "timeout", "no_fail_to_pass",
                  "gold_breaks_tests"):
        return reason  # type: ignore[return-value]
    return "runner_failed" if not tests_ran else "fail_to_pass_differs"


def _keep_transcript(logs: Path, transcript: str | None) -> None:
    """The build transcript (every setup command, exit code and output tail) beside the
    validation logs."""
    if not transcript or not Path(transcript).is_file():
        return
    logs.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(transcript, logs / "build.json")
