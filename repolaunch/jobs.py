"""repolaunch's work as jobs: build an environment, validate a candidate.

Module-level functions of one frozen model, returning JSON: what the local pool and Celery
workers run alike (harness/executor.py, harness/queue.py). Each writes its own result to
the registry under a key made from its inputs, so a job that runs twice (its first worker
died after writing) still leaves one record.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from typing import Any

from pydantic import BaseModel, ConfigDict

from envs.models import EnvSpec, RunRecord, RunStatus, SWETask


class _Job(BaseModel):
    model_config = ConfigDict(frozen=True)

    # None: the registry of this process's settings (what a remote worker has); a URL:
    # that registry (a local run that was handed one).
    registry_url: str | None = None

    def digest(self) -> str:
        data = self.model_dump_json(exclude={"registry_url"})
        return hashlib.sha256(data.encode()).hexdigest()[:16]


def _registry(job: _Job) -> Any:
    from envs.registry import Registry

    return Registry(job.registry_url)


class BuildJob(_Job):
    """Build a repository at a commit into an environment (no test run)."""

    source: str  # a local repository path
    commit: str | None = None
    suite: str | None = None
    max_steps: int = 8
    rebuild: bool = False  # build the env image even if it exists


def build_one(job: BuildJob) -> dict[str, Any]:
    """Launch the repository at the commit; the env lands in the registry (keyed by name)."""
    from repolaunch.build import LaunchError, launch

    with _registry(job) as reg:
        try:
            res = launch(job.source, commit=job.commit, suite=job.suite,
                         max_steps=job.max_steps, rebuild=job.rebuild, run_tests=False,
                         registry=reg)
        except LaunchError as exc:
            return {"ok": False, "failure": str(exc), "env": None, "per_test_command": "",
                    "cache_hit": False}
        ok = bool(res.ok and res.env is not None)
        return {"ok": ok, "failure": None if ok else (res.failure or "the environment did "
                                                           "not build"),
                "env": res.env.model_dump(mode="json") if ok and res.env else None,
                "per_test_command": res.plan.per_test_command, "cache_hit": res.cache_hit,
                "commit": res.commit}


class ValidateJob(_Job):
    """Validate one candidate in its environment; register it when verified."""

    task: SWETask
    env: EnvSpec
    repo: str = ""
    runs_before: int = 2
    runs_after: int = 3
    confirm_runs: int = 3
    per_test_command: str | None = None
    timeout: float | None = None
    details: dict[str, Any] = {}


def validate_one(job: ValidateJob) -> dict[str, Any]:
    """The validation's summary; the verified task and a `validate` run record are put in
    the registry (the run id carries the job's digest: a rerun replaces, never adds)."""
    from repolaunch.validate import validate

    started = datetime.now(timezone.utc)
    v = validate(job.task, job.env, runs_before=job.runs_before, runs_after=job.runs_after,
                 confirm_runs=job.confirm_runs, per_test_command=job.per_test_command,
                 timeout=job.timeout)
    with _registry(job) as reg:
        if v.verified:
            reg.put_swe_task(v.task)
        reg.put_run(RunRecord(
            run_id=f"validate/{v.instance_id}/{job.digest()}", kind="validate",
            target=v.instance_id, status=RunStatus.DONE, resolved=v.verified,
            details={"repo": job.repo, **v.summary(), **job.details}, started_at=started,
            finished_at=datetime.now(timezone.utc)))
    return {**v.summary(), "pass_to_pass": v.pass_to_pass}
