"""Repository -> mined -> built -> validated -> registered, with a per-stage yield table.

    report = mine_and_validate(Path("repo"), registry=reg, log=print)
    report.rows()          # [("mined commits", 6), ("candidates", 2), ...]
    report.verified_ids    # the instance ids registered as verified tasks

Each candidate gets its environment from `repolaunch.build.launch` at its base commit with
``run_tests=False``: env images are keyed by the dependency fingerprint, so commits with the
same dependency files share one image and all but the first launch are cache hits. Every
validation is kept as a ``validate`` run record (verified or not, with its reason and per-run
summaries); verified tasks are put in the registry with their env_spec.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from envs import diffs
from envs.config import get_settings
from envs.files import StateFile, input_key, safe_name
from envs.models import EnvSpec, RunRecord, RunStatus, SWETask
from harness.executor import run_inline
from repolaunch.build import LaunchError, launch
from repolaunch.jobs import ValidateJob, validate_one
from repolaunch.mine import mine

Log = Callable[[str], None]
Progress = Callable[[str, SWETask, "TaskOutcome | None"], None]


class TaskOutcome(BaseModel):
    """What became of one mined candidate."""

    instance_id: str
    base_commit: str
    stage: str  # "env" (the environment did not build) or "validate"
    verified: bool = False
    reason: str | None = None
    detail: str = ""
    image: str | None = None
    env_cache_hit: bool = False
    fail_to_pass: list[str] = Field(default_factory=list)
    pass_to_pass: int = 0
    flaky: list[str] = Field(default_factory=list)
    new_tests: list[str] = Field(default_factory=list)
    before_build_broken: bool = False
    seconds: float = 0.0


class PipelineReport(BaseModel):
    repo: str
    path: str
    mined_commits: int = 0
    candidates: int = 0
    rejected_at_mining: dict[str, int] = Field(default_factory=dict)
    env_built: int = 0
    env_failed: int = 0
    validated: int = 0
    verified: int = 0
    rejected_at_validation: dict[str, int] = Field(default_factory=dict)
    tasks: list[TaskOutcome] = Field(default_factory=list)
    verified_ids: list[str] = Field(default_factory=list)
    resumed: int = 0  # candidates whose validation an earlier run had finished
    state_file: str = ""
    seconds: float = 0.0

    def rows(self) -> list[tuple[str, int]]:
        """The yield table, stage by stage (rejections indented under their stage)."""
        out: list[tuple[str, int]] = [("mined commits", self.mined_commits)]
        out += [(f"  rejected at mining: {k}", v)
                for k, v in sorted(self.rejected_at_mining.items())]
        out += [("candidates", self.candidates), ("env built", self.env_built)]
        if self.env_failed:
            out.append(("  env failed", self.env_failed))
        out += [("validated", self.validated)]
        out += [(f"  rejected at validation: {k}", v)
                for k, v in sorted(self.rejected_at_validation.items())]
        out.append(("verified", self.verified))
        return out


def mine_and_validate(repo_path: str | Path, *, registry: Any = None,
                      log: Log = lambda m: None, issues: Path | None = None,
                      runs_before: int = 2, runs_after: int = 3, confirm_runs: int = 3,
                      timeout: float | None = None, limit: int | None = None,
                      newest: bool = False, mined: Any = None,
                      progress: Progress | None = None, runner: Any = None,
                      state: Path | None = None, resume: bool = True) -> PipelineReport:
    """Mine a local repository, build and validate every candidate, register the verified.

    ``limit`` validates the first N candidates in history order, or the last N with
    ``newest`` (recent changes are likelier to build against today's package indexes).
    ``mined``: candidates already mined (a `MineResult`, e.g. from the GitHub miner, whose
    clone is ``repo_path``); the local miner is then not run. ``runner``: an executor
    (harness.executor / harness.queue) the validations run on; default: this process.
    ``state``: the run's state file (default: one per repository and settings under
    `<home>/state/mine/`): a candidate validated before, with the same inputs, is not
    validated again, unless its validation failed for the harness's reasons; ``resume``
    False starts afresh."""
    from envs.registry import Registry

    t0 = time.monotonic()
    path = Path(repo_path).expanduser().resolve()
    own = registry is None
    reg = registry or Registry()
    try:
        if mined is None:
            log(f"mining {path} ...")
            mined = mine(path, issues=issues)
        cands = mined.candidates
        if limit:
            cands = cands[-limit:] if newest else cands[:limit]
        name = cands[0].repo if cands else path.name
        report = PipelineReport(
            repo=name, path=str(path), mined_commits=mined.processed, candidates=len(cands),
            rejected_at_mining=dict(Counter(r.reason for r in mined.rejected)))
        log(f"mined {mined.processed} commits: {len(cands)} candidate(s), "
            f"{len(mined.rejected)} rejected")
        rejected: Counter[str] = Counter()
        envs: dict[str, tuple[EnvSpec | None, str | None, str, bool]] = {}
        jobs: list[ValidateJob] = []
        url = reg.engine.url.render_as_string(hide_password=False) if runner is None else None
        settings = {"runs_before": runs_before, "runs_after": runs_after,
                    "confirm_runs": confirm_runs, "timeout": timeout}
        store = _mine_state(state, path, settings, resume)
        report.state_file = str(store.path)

        def finish(task: SWETask, v: dict[str, Any], image: str, hit: bool) -> None:
            report.validated += 1
            if v["verified"]:
                report.verified += 1
                report.verified_ids.append(task.instance_id)
            else:
                rejected[v["reason"] or "?"] += 1
            outcome = TaskOutcome(
                instance_id=task.instance_id, base_commit=task.base_commit, stage="validate",
                verified=v["verified"], reason=v["reason"], detail=v["detail"],
                image=image, env_cache_hit=hit, fail_to_pass=v["FAIL_TO_PASS"],
                pass_to_pass=len(v["pass_to_pass"]), flaky=v["flaky"],
                new_tests=v["new_tests"], before_build_broken=v["before_build_broken"],
                seconds=v["seconds"])
            log(f"  {task.instance_id}: {'verified' if v['verified'] else v['reason']} "
                f"({v['detail']})")
            report.tasks.append(outcome)
            if progress:
                progress("done", task, outcome)

        for task in cands:
            started = datetime.now(timezone.utc)
            tt = time.monotonic()
            if progress:
                progress("start", task, None)
            earlier = store.done(_candidate_key(task))
            if earlier is not None:  # validated by an earlier run with the same inputs
                report.resumed += 1
                report.env_built += 1
                finish(task, earlier["validation"], earlier["image"], True)
                continue
            if task.base_commit not in envs:
                envs[task.base_commit] = _env_for(path, task.base_commit, reg, log)
            env, why, per_test, hit = envs[task.base_commit]
            if env is None:
                report.env_failed += 1
                outcome = TaskOutcome(instance_id=task.instance_id, base_commit=task.base_commit,
                                      stage="env", reason="env_build_failed", detail=why or "",
                                      seconds=round(time.monotonic() - tt, 2))
                rejected["env_build_failed"] += 1
                reg.put_run(RunRecord(
                    run_id=f"validate/{task.instance_id}/{int(started.timestamp())}",
                    kind="validate", target=task.instance_id, status=RunStatus.FAILED,
                    resolved=False, details={"repo": name, "reason": "env_build_failed",
                                             "detail": why}, started_at=started,
                    finished_at=datetime.now(timezone.utc)))
                report.tasks.append(outcome)
                if progress:
                    progress("done", task, outcome)
                continue
            report.env_built += 1
            log(f"validating {task.instance_id} in {env.image}")
            jobs.append(ValidateJob(
                task=task, env=env, repo=name, runs_before=runs_before, runs_after=runs_after,
                confirm_runs=confirm_runs, per_test_command=per_test or None, timeout=timeout,
                details={"image": env.image, "env_cache_hit": hit}, registry_url=url))
        # Validation is the long part: it runs as jobs (here, in a local pool, or on Celery
        # workers, which register what they verify themselves).
        run = runner.map if runner is not None else run_inline
        by_id = {j.task.instance_id: j for j in jobs}
        for done_ in run(validate_one, jobs):
            job = by_id[done_.job.task.instance_id]
            task, env = job.task, job.env
            if done_.ok:
                v = done_.value
            else:  # the harness failed, not the candidate: an infrastructure reason
                v = {"verified": False, "reason": INFRA_REASON,
                     "detail": done_.error.splitlines()[0][:300] if done_.error else "",
                     "FAIL_TO_PASS": [], "pass_to_pass": [], "flaky": [], "new_tests": [],
                     "before_build_broken": False, "seconds": 0.0}
            store.put(_candidate_key(task), {"instance_id": task.instance_id,
                                              "image": env.image, "validation": v})
            finish(task, v, env.image, job.details["env_cache_hit"])
        report.rejected_at_validation = dict(rejected)
        report.seconds = round(time.monotonic() - t0, 1)
        return report
    finally:
        if own:
            reg.close()


INFRA_REASON = "validation_error"  # the harness failed, not the candidate: redone on resume


def _candidate_key(task: SWETask) -> str:
    return input_key(task.model_dump(mode="json"))


def _mine_state(state: Path | None, repo: Path, settings: dict[str, Any],
                resume: bool) -> StateFile:
    if state is None:
        tag = hashlib.sha256(str(repo).encode()).hexdigest()[:12]
        state = get_settings().home / "state" / "mine" / f"{safe_name(repo.name)}-{tag}.jsonl"
    if not resume:
        Path(state).unlink(missing_ok=True)
    return StateFile(state, settings=settings,
                     retry=lambda r: r["validation"].get("reason") == INFRA_REASON)


def _env_for(path: Path, commit: str, registry: Any, log: Log
             ) -> tuple[EnvSpec | None, str | None, str, bool]:
    """(env, failure, per-test command, cache hit) for the repository at a commit."""
    try:
        res = launch(path, commit=commit, run_tests=False, log=log, registry=registry)
    except LaunchError as exc:
        return None, str(exc), "", False
    if not res.ok or res.env is None:
        return None, res.failure or "the environment did not build", "", False
    return res.env, None, res.plan.per_test_command, res.cache_hit


# --------------------------------------------------------------------------- export / import

EXPORT_FORMATS = ("swebench",)


def patched_files(patch: str) -> list[tuple[str, bool]]:
    """(path, is_new) for every file a unified diff touches (`envs.diffs`, tolerant): the
    path after the change, the old one for a deletion."""
    return [(f.path, f.is_new) for f in diffs.parse(patch, strict=False)]


def eval_script(task: SWETask) -> str:
    """A self-contained bash script, SWE-bench style, run in a container of the task's image
    after a prediction was applied: go to the base commit (uncommitted changes carried
    along), reset the test files to the base, apply the test patch, run the test command."""
    import hashlib
    import shlex

    from envs.verify import DETERMINISM_ENV

    spec = task.env_spec
    if spec is None:
        raise ValueError(f"{task.instance_id} has no environment")
    base = shlex.quote(task.base_commit)
    marker = "EOF_" + hashlib.sha256(task.test_patch.encode()).hexdigest()[:16]
    lines = ["#!/bin/bash", "set -uo pipefail",
             f"cd {shlex.quote(spec.workdir)}"]
    lines += [f"export {k}={shlex.quote(v)}" for k, v in {**DETERMINISM_ENV, **spec.env}.items()]
    lines += [f'if [ "$(git rev-parse HEAD)" != {base} ]; then',
              f"  git -c advice.detachedHead=false checkout -q {base} || exit 3", "fi"]
    for path, is_new in patched_files(task.test_patch):
        q = shlex.quote(path)
        lines.append(f"rm -f -- {q}" if is_new else f"git checkout -q {base} -- {q}")
    if task.test_patch.strip():
        patch = task.test_patch if task.test_patch.endswith("\n") else task.test_patch + "\n"
        lines += [f"git apply --verbose - <<'{marker}' || exit 4", patch + marker]
    lines += [spec.test_command, ""]
    return "\n".join(lines)


def export_row(task: SWETask) -> dict[str, Any]:
    """The HF-compatible row: SWE-bench fields (test lists as JSON strings) plus what it
    takes to run it here (image, eval script, report format and path, test command, spec)."""
    row = task.to_swebench()
    spec = task.env_spec
    row["image"] = spec.image if spec else None
    row["test_command"] = spec.test_command if spec else ""
    row["report_format"] = spec.report_format if spec else None
    row["report_path"] = spec.report_path if spec else None
    row["eval_script"] = eval_script(task) if spec else ""
    return row


def import_row(row: dict[str, Any], where: str = "row") -> SWETask:
    """An exported (or SWE-bench-style) row back as a task; the inverse of `export_row`.
    `where` (file:line) names the row in the error of one that does not validate."""
    from harness.evaluate import task_from_row

    return task_from_row(row, where)
