"""Evaluate predicted patches: each in a fresh hardened sandbox — apply, run, parse, grade.

Predictions are SWE-bench's JSONL (`instance_id`, `model_name_or_path`, `model_patch`); the
special predictions `gold` and `empty` evaluate the reference patch and no patch. Tasks come
from the registry or from a SWE-bench-style instance JSONL that carries envfactory's
environment fields (`image`, `test_command`, `report_format`, ... or a whole `env_spec`).

Layout of a run, resumable by run id:

    <home>/runs/<run_id>/<model>/<instance_id>/{patch.diff, test_output.txt, report.json}
    <home>/runs/<run_id>/report.json      the summary, SWE-bench's fields plus failure kinds
    <home>/runs/<run_id>/state.jsonl      each verdict keyed by a hash of its inputs (the
                                          patch included); an infrastructure failure or a
                                          changed prediction is evaluated again on resume
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from envs import grading
from envs.config import get_settings
from envs.errors import UserError
from envs.files import StateFile, atomic_write, input_key, read_jsonl, row_error, safe_name
from envs.models import EnvSpec, FailureKind, Language, SWETask
from envs.verify import (
    DETERMINISM_ENV,
    grade_swe,
    put_test_patch,
    run_tests,
    settle_no_results,
)

GOLD = "gold"
EMPTY = "empty"


class EvalError(UserError):
    """Bad input to an evaluation (file, field, id); one line."""


class Prediction(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    instance_id: str
    model_name_or_path: str = "unknown"
    model_patch: str | None = None


# --------------------------------------------------------------------------- inputs


def task_from_row(row: dict[str, Any], where: str = "row") -> SWETask:
    """A SWE-bench-style instance row, with envfactory's environment fields, as a task.
    A row that does not validate is an EvalError naming `where` (file:line), the field and
    its value."""
    try:
        return _task_from_row(dict(row), where)
    except (ValidationError, ValueError, TypeError) as exc:
        if isinstance(exc, EvalError):
            raise
        bad = row_error(where, exc, row)
        raise EvalError(bad.message, where=bad.where, field=bad.field,
                        value=bad.value) from None


def _task_from_row(row: dict[str, Any], where: str) -> SWETask:
    spec = row.pop("env_spec", None)
    if isinstance(spec, str):
        spec = json.loads(spec)
    if spec is None and row.get("image"):
        spec = {
            "name": row.get("env_name") or row["instance_id"],
            "language": row.get("language") or "python",
            "base_image": row.get("base_image") or row["image"],
            "image": row["image"],
            "test_command": row.get("test_command") or row.get("eval_script") or "",
            "report_format": row.get("report_format") or "exitcode",
            "report_path": row.get("report_path"),
            "workdir": row.get("workdir") or "/testbed",
        }
    if spec is not None:
        row["env_spec"] = EnvSpec.model_validate(spec)
    if row.get("language"):
        row["language"] = Language(row["language"])
    for key in ("instance_id", "repo", "base_commit"):
        if key not in row:
            raise EvalError(f"the instance lacks {key!r}", where=where)
    return SWETask.model_validate(row)


def load_tasks(dataset: Path | None = None, *, registry: Any = None) -> dict[str, SWETask]:
    if dataset is not None:
        tasks = [task_from_row(r, where) for where, r in read_jsonl(dataset)]
    else:
        if registry is None:
            from envs.registry import Registry

            with Registry() as reg:
                tasks = list(reg.list_swe_tasks())
        else:
            tasks = list(registry.list_swe_tasks())
    return {t.instance_id: t for t in tasks}


def load_predictions(source: str, tasks: dict[str, SWETask]) -> list[Prediction]:
    if source == GOLD:
        return [Prediction(instance_id=i, model_name_or_path=GOLD, model_patch=t.patch)
                for i, t in tasks.items()]
    if source == EMPTY:
        return [Prediction(instance_id=i, model_name_or_path=EMPTY, model_patch="")
                for i in tasks]
    preds = []
    for where, row in read_jsonl(Path(source)):
        if "instance_id" not in row:
            raise EvalError("the prediction lacks 'instance_id'", where=where)
        try:
            preds.append(Prediction.model_validate(row))
        except ValidationError as exc:
            bad = row_error(where, exc, row)
            raise EvalError(bad.message, where=bad.where, field=bad.field,
                            value=bad.value) from None
    return preds


# --------------------------------------------------------------------------- one instance


@dataclass(frozen=True)
class EvalJob:
    """Everything one evaluation needs, picklable for a worker process."""

    task_json: str
    prediction_json: str
    out_dir: str
    timeout: float | None = None


def _result(task: SWETask, pred: Prediction, *, failure: FailureKind, reason: str,
            grade: grading.GradeReport | None, timings: dict[str, float],
            patch_method: str | None, exit_code: int | None) -> dict[str, Any]:
    patch = pred.model_patch
    report = {
        "instance_id": task.instance_id,
        "model_name_or_path": pred.model_name_or_path,
        "resolved": bool(grade and grade.resolved and failure is FailureKind.NONE),
        "failure_kind": failure.value,
        "infrastructure": failure.is_infrastructure,
        "reason": reason,
        "patch_is_None": patch is None,
        "patch_exists": bool(patch and patch.strip()),
        "patch_successfully_applied": failure is not FailureKind.PATCH_FAILED,
        "patch_method": patch_method,
        "exit_code": exit_code,
        "timings": {k: round(v, 4) for k, v in timings.items()},
    }
    if grade is not None:
        report["tests_status"] = grade.to_swebench()["tests_status"]
        report["resolution"] = grade.resolution.value
        report["warnings"] = grade.warnings
    return report


def evaluate_one(job: EvalJob) -> dict[str, Any]:
    """Evaluate one prediction; writes the instance's files and returns its report."""
    from envs.instance import open_instance
    from envs.sandbox import SandboxDied, SandboxError

    task = SWETask.model_validate_json(job.task_json)
    pred = Prediction.model_validate_json(job.prediction_json)
    out = Path(job.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / "patch.diff", pred.model_patch or "")
    timings: dict[str, float] = {}
    spec = task.env_spec
    t0 = time.monotonic()

    def done(failure: FailureKind, reason: str, grade: grading.GradeReport | None = None,
             method: str | None = None, exit_code: int | None = None) -> dict[str, Any]:
        timings["total"] = time.monotonic() - t0
        report = _result(task, pred, failure=failure, reason=reason, grade=grade,
                         timings=timings, patch_method=method, exit_code=exit_code)
        atomic_write(out / "report.json", json.dumps(report, indent=2))
        return report

    if spec is None or not spec.image:
        return done(FailureKind.ENV_COLLAPSE, "the task has no built environment image")
    timeout = job.timeout or spec.limits.timeout
    mark = time.monotonic()
    try:
        sb = open_instance(spec, env={**DETERMINISM_ENV, **spec.env},
                           labels={"envfactory.instance": task.instance_id[:60]})
    except SandboxError as exc:
        return done(FailureKind.ENV_COLLAPSE, f"sandbox did not start: {exc}")
    timings["start"] = time.monotonic() - mark
    try:
        mark = time.monotonic()
        applied = sb.apply_patch(pred.model_patch or "")
        timings["patch"] = time.monotonic() - mark
        if not applied.applied:
            return done(FailureKind.PATCH_FAILED, f"patch did not apply: {applied.reason}")
        method = applied.method
        # The one verifier's steps (envs/verify.py), timed one by one: a prediction that
        # edited a test file has it put back before the test patch goes on.
        mark = time.monotonic()
        broken = put_test_patch(sb, task, spec.checkout or task.base_commit)
        timings["test_patch"] = time.monotonic() - mark
        if broken is not None:
            return done(broken.failure, broken.reason, method=method)
        mark = time.monotonic()
        run = run_tests(sb, spec, timeout=timeout)
        res = run.result
        timings["run"] = time.monotonic() - mark
        atomic_write(out / "test_output.txt", run.transcript())
        mark = time.monotonic()
        if not run.has_results or res.timed_out or res.oom_killed:
            # No grading possible: the verifier types why (timeout, OOM, the prediction
            # broke the build, or the environment did).
            verdict = grade_swe(run, task, changed=bool((pred.model_patch or "").strip()),
                                limits=spec.limits.memory)
            verdict = settle_no_results(verdict, sb, task, spec, timeout=timeout,
                                        commit=spec.checkout or task.base_commit)
            return done(verdict.failure, verdict.reason, method=method, exit_code=res.exit_code)
        assert run.parsed is not None
        grade = grading.grade(run.parsed, task.FAIL_TO_PASS, task.PASS_TO_PASS)
        timings["grade"] = time.monotonic() - mark
        return done(grade.failure_kind, grade.reason, grade, method=method,
                    exit_code=res.exit_code)
    except SandboxDied as exc:
        return done(FailureKind.ENV_COLLAPSE, f"container died: {exc}")
    except SandboxError as exc:
        return done(FailureKind.ENV_COLLAPSE, f"sandbox failed: {exc}")
    finally:
        mark = time.monotonic()
        sb.close()
        timings["close"] = time.monotonic() - mark


# --------------------------------------------------------------------------- a run


class EvalSummary(BaseModel):
    run_id: str
    run_dir: str
    total_instances: int
    submitted_instances: int
    completed_instances: int
    resolved_instances: int
    unresolved_instances: int
    empty_patch_instances: int
    error_instances: int
    skipped_instances: int  # finished in an earlier invocation of the same run
    failure_kinds: dict[str, int]
    resolved_ids: list[str]
    unresolved_ids: list[str]
    error_ids: list[str]
    empty_patch_ids: list[str]
    instances: list[dict[str, Any]]
    seconds: float

    @property
    def resolved_rate(self) -> float:
        return self.resolved_instances / self.submitted_instances if self.submitted_instances \
            else 0.0


def default_run_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def _input_key(pred: Prediction, task: SWETask, timeout: float | None) -> str:
    return input_key(pred.model_name_or_path, pred.instance_id, pred.model_patch,
                     task.test_patch, task.FAIL_TO_PASS, task.PASS_TO_PASS,
                     task.env_spec.model_dump(mode="json") if task.env_spec else None, timeout)


def select_predictions(predictions: str | Iterable[Prediction], tasks: dict[str, SWETask],
                       instance_ids: list[str] | None = None) -> list[Prediction]:
    """The predictions to evaluate (a file, gold, empty, or a list), checked against the
    tasks: an EvalError names what does not fit, before any sandbox starts."""
    preds = load_predictions(predictions, tasks) if isinstance(predictions, str) \
        else list(predictions)
    if instance_ids:
        wanted = set(instance_ids)
        unknown = wanted - {p.instance_id for p in preds}
        if unknown:
            raise EvalError(f"no prediction for {', '.join(sorted(unknown)[:5])}",
                            field="--instance-id")
        preds = [p for p in preds if p.instance_id in wanted]
    missing = [p.instance_id for p in preds if p.instance_id not in tasks]
    if missing:
        raise EvalError(f"{len(missing)} prediction(s) name unknown instances, e.g. "
                        f"{missing[0]!r} (known: {len(tasks)} task(s))")
    return preds


def evaluate(predictions: str | Iterable[Prediction], *, tasks: dict[str, SWETask],
             run_id: str | None = None, workers: int = 1, timeout: float | None = None,
             instance_ids: list[str] | None = None, force: bool = False,
             runs_dir: Path | None = None,
             progress: Callable[[dict[str, Any]], None] | None = None,
             record: bool = True, executor: Any = None) -> EvalSummary:
    """Evaluate predictions against tasks; resumable by run id. ``executor``: where the
    instances run (harness.queue.get_executor); default: a local pool of ``workers``."""
    from harness.executor import LocalExecutor

    start = time.monotonic()
    run_id = run_id or default_run_id()
    preds = select_predictions(predictions, tasks, instance_ids)
    run_dir = (runs_dir or get_settings().runs_dir) / safe_name(run_id)
    # The run's state: each verdict keyed by what it depends on (the patch, the task's tests
    # and environment, the timeout), so a corrected prediction is evaluated again, never
    # answered with the old verdict; an infrastructure failure is retried on resume.
    state = StateFile(run_dir / "state.jsonl", retry=lambda r: FailureKind(
        r.get("failure_kind", "NONE")).is_infrastructure)
    keys = {p.instance_id: _input_key(p, tasks[p.instance_id], timeout) for p in preds}
    reports_by_id: dict[str, dict[str, Any]] = {}
    jobs: list[EvalJob] = []
    skipped = 0
    for p in preds:
        out = run_dir / safe_name(p.model_name_or_path) / safe_name(p.instance_id)
        previous = state.done(keys[p.instance_id]) if not force else None
        if previous is not None:
            reports_by_id[p.instance_id] = {k: v for k, v in previous.items() if k != "key"}
            skipped += 1
            if progress:
                progress(reports_by_id[p.instance_id])
            continue
        jobs.append(EvalJob(task_json=tasks[p.instance_id].model_dump_json(),
                            prediction_json=p.model_dump_json(), out_dir=str(out),
                            timeout=timeout))
    if jobs:
        executor = executor or LocalExecutor(workers=max(1, min(workers, len(jobs))))
        for outcome in executor.map(evaluate_one, jobs):
            pred = Prediction.model_validate_json(outcome.job.prediction_json)
            if outcome.ok:
                report = outcome.value
            else:
                # The harness itself failed for this instance: never a verdict on the model.
                kind = FailureKind.ENV_COLLAPSE if outcome.worker_died else \
                    FailureKind.VERIFIER_ERROR
                report = _result(tasks[pred.instance_id], pred, failure=kind,
                                 reason=outcome.error.splitlines()[0][:300], grade=None,
                                 timings={}, patch_method=None, exit_code=None)
            reports_by_id[pred.instance_id] = report
            state.put(keys[pred.instance_id], report)
            if progress:
                progress(report)
    ordered = [reports_by_id[p.instance_id] for p in preds if p.instance_id in reports_by_id]
    summary = _summarise(run_id, run_dir, tasks, ordered, skipped, time.monotonic() - start)
    atomic_write(run_dir / "report.json", summary.model_dump_json(indent=2))
    if record:
        _record(run_id, ordered)
    return summary


def _summarise(run_id: str, run_dir: Path, tasks: dict[str, SWETask],
               reports_: list[dict[str, Any]], skipped: int, seconds: float) -> EvalSummary:
    resolved = [r["instance_id"] for r in reports_ if r["resolved"]]
    errors = [r["instance_id"] for r in reports_
              if FailureKind(r["failure_kind"]).is_infrastructure]
    empty = [r["instance_id"] for r in reports_ if not r["patch_exists"]]
    unresolved = [r["instance_id"] for r in reports_
                  if not r["resolved"] and r["instance_id"] not in errors]
    kinds = Counter(r["failure_kind"] for r in reports_)
    return EvalSummary(
        run_id=run_id, run_dir=str(run_dir), total_instances=len(tasks),
        submitted_instances=len(reports_), completed_instances=len(reports_) - len(errors),
        resolved_instances=len(resolved), unresolved_instances=len(unresolved),
        empty_patch_instances=len(empty), error_instances=len(errors),
        skipped_instances=skipped, failure_kinds=dict(kinds), resolved_ids=resolved,
        unresolved_ids=unresolved, error_ids=errors, empty_patch_ids=empty,
        instances=reports_, seconds=round(seconds, 2))


def _record(run_id: str, reports_: list[dict[str, Any]]) -> None:
    """Keep each verdict in the registry as a run (best effort: the files are the record)."""
    try:
        from envs.models import RunRecord, RunStatus
        from envs.registry import Registry

        now = datetime.now(timezone.utc)
        with Registry() as reg:
            for r in reports_:
                reg.put_run(RunRecord(
                    run_id=f"eval/{run_id}/{r['model_name_or_path']}/{r['instance_id']}",
                    kind="eval", target=r["instance_id"], status=RunStatus.DONE,
                    failure_kind=FailureKind(r["failure_kind"]), resolved=r["resolved"],
                    details={k: r[k] for k in ("reason", "timings", "patch_method")},
                    finished_at=now))
    except Exception:  # the registry is a convenience here; the run directory is the truth
        return
