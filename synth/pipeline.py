"""The synth run: plan -> draft -> implement -> verify -> register, resumable, with yields.

Task i of a run goes to family i mod F, with a seed derived from (run seed, family, index),
so a rerun plans the same task ids; finished ones are read back from the state file (one
JSON line per task) instead of being verified again.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from envs.config import get_settings
from envs.errors import UserError
from envs.files import StateFile, input_key
from envs.models import TerminalTask
from envs.registry import Registry
from synth import families as fams
from synth.draft import DraftError, draft, task_id_for, task_seed
from synth.export import load_task
from synth.implement import ImplementError, implement
from synth.spec import Gate, GateRun, TaskDraft, TaskOutcome
from synth.verify import DedupIndex, verify

DRAFT_ATTEMPTS = 5  # resamples when a draft collides with an earlier one of the same run

Progress = Callable[[TaskOutcome, int, int], None]  # (outcome, done, total)


class FamilyYield(BaseModel):
    model_config = ConfigDict(frozen=True)

    family: str
    category: str
    planned: int = 0
    drafted: int = 0
    implemented: int = 0
    verified: int = 0
    failed_gates: dict[str, int] = Field(default_factory=dict)


class SynthReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    n: int
    seed: int
    families: list[str]
    wall_s: float
    resumed: int = 0
    outcomes: list[TaskOutcome]
    state_file: str | None = None

    @property
    def verified(self) -> int:
        return sum(o.passed for o in self.outcomes)

    @property
    def survival(self) -> float:
        return self.verified / len(self.outcomes) if self.outcomes else 0.0

    def stages(self) -> dict[str, int]:
        """How many tasks got through each stage (drafted >= implemented >= verified)."""
        o = self.outcomes
        return {
            "planned": len(o),
            "drafted": sum(x.failed_gate != Gate.DRAFT for x in o),
            "implemented": sum(x.failed_gate not in (Gate.DRAFT, Gate.IMPLEMENT) for x in o),
            "verified": sum(x.passed for x in o),
            "registered": sum(x.registered for x in o),
        }

    def gates(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for x in self.outcomes:
            if x.failed_gate is not None:
                out[x.failed_gate.value] = out.get(x.failed_gate.value, 0) + 1
        return out

    def per_family(self) -> list[FamilyYield]:
        rows: dict[str, dict] = {}
        for x in self.outcomes:
            r = rows.setdefault(x.family, {"family": x.family, "category": x.category,
                                           "planned": 0, "drafted": 0, "implemented": 0,
                                           "verified": 0, "failed_gates": {}})
            r["planned"] += 1
            r["drafted"] += x.failed_gate != Gate.DRAFT
            r["implemented"] += x.failed_gate not in (Gate.DRAFT, Gate.IMPLEMENT)
            r["verified"] += x.passed
            if x.failed_gate is not None:
                g = x.failed_gate.value
                r["failed_gates"][g] = r["failed_gates"].get(g, 0) + 1
        return [FamilyYield(**rows[k]) for k in sorted(rows)]

    def summary(self) -> dict:
        return {"n": self.n, "seed": self.seed, "wall_s": round(self.wall_s, 1),
                "resumed": self.resumed, "survival": round(self.survival, 4),
                "stages": self.stages(), "failed_gates": self.gates(),
                "families": [f.model_dump() for f in self.per_family()],
                "state_file": self.state_file}


def state_path(seed: int, names: list[str]) -> Path:
    key = hashlib.sha256(json.dumps([seed, sorted(names)]).encode()).hexdigest()[:12]
    return get_settings().home / "synth" / f"state-{seed}-{key}.jsonl"


def _state(path: Path) -> StateFile:
    # An infrastructure outcome (the engine failed, not the task) is retried on resume.
    return StateFile(path, retry=lambda r: r.get("failed_gate") == Gate.INFRA.value)


def _key(item: TaskDraft | TaskOutcome) -> str:
    """What a task's outcome depends on: its id and, for a draft, everything drafted."""
    if isinstance(item, TaskOutcome):
        return input_key("outcome", item.task_id)
    return input_key("draft", item.model_dump(mode="json"))


def plan_drafts(names: list[str], n: int, seed: int, *, use_llm: bool = False
                ) -> list[TaskDraft | TaskOutcome]:
    """Stage 1 for a whole run; a draft that fails is its outcome (gate DRAFT)."""
    seen: set[str] = set()
    out: list[TaskDraft | TaskOutcome] = []
    for i in range(n):
        name = names[i % len(names)]
        index = i // len(names)
        fam = fams.get_family(name)
        tid = task_id_for(name, seed, index)
        result: TaskDraft | TaskOutcome | None = None
        for attempt in range(DRAFT_ATTEMPTS):
            try:
                d = draft(fam, task_seed(seed, name, index, attempt), task_id=tid,
                          use_llm=use_llm)
            except DraftError as exc:
                result = TaskOutcome(task_id=tid, family=name, category=fam.category,
                                     failed_gate=Gate.DRAFT, detail=str(exc)[:300])
                break
            if d.fingerprint not in seen:
                seen.add(d.fingerprint)
                result = d
                break
        if result is None:  # every resample collided: the family's space is exhausted
            result = TaskOutcome(task_id=tid, family=name, category=fam.category,
                                 failed_gate=Gate.DUPLICATE,
                                 detail=f"{DRAFT_ATTEMPTS} drafts were all duplicates")
        out.append(result)
    return out


def _dedup_from_registry(registry: Registry | None) -> DedupIndex:
    index = DedupIndex()
    if registry is not None:
        for t in registry.list_terminal_tasks():
            index.claim(t)
    return index


def process(d: TaskDraft, *, dedup: DedupIndex, registry: Registry | None,
            oracle_runs: int = 3) -> TaskOutcome:
    """Stages 2 and 3 (and registration) for one draft."""
    t0 = time.monotonic()
    try:
        task = implement(d)
    except ImplementError as exc:
        return TaskOutcome(task_id=d.task_id, family=d.family, category=d.category,
                           failed_gate=Gate.IMPLEMENT, detail=str(exc)[:300],
                           seconds=round(time.monotonic() - t0, 2))
    verified, outcome = verify(task, dedup=dedup, oracle_runs=oracle_runs)
    if outcome.passed and registry is not None:
        registry.put_terminal_task(verified)
        outcome = outcome.model_copy(update={"registered": True})
    return outcome


class SynthJob(BaseModel):
    """One draft's implement + verify + register, as a job (harness/queue.py)."""

    model_config = ConfigDict(frozen=True)

    draft: TaskDraft
    oracle_runs: int = 3


def synth_one(job: SynthJob) -> dict:
    """`process` in a worker: duplicates are judged against the registry it registers in."""
    with Registry() as reg:
        outcome = process(job.draft, dedup=_dedup_from_registry(reg), registry=reg,
                          oracle_runs=job.oracle_runs)
    return outcome.model_dump(mode="json")


def _infra(d: TaskDraft, detail: str) -> TaskOutcome:
    return TaskOutcome(task_id=d.task_id, family=d.family, category=d.category,
                       failed_gate=Gate.INFRA, detail=detail,
                       runs=[GateRun(gate=Gate.INFRA, passed=False)])


def run_synth(n: int = 20, families: str | list[str] | None = "all", *, seed: int = 0,
              registry: Registry | None = None, workers: int = 3, resume: bool = True,
              progress: Progress | None = None, use_llm: bool = False,
              oracle_runs: int = 3, runner: Any = None) -> SynthReport:
    """Synthesize `n` tasks over `families` ('all', 'a,b' or a list) and register survivors.

    The entry point for the CLI and for `envfactory run` (README command 1), e.g.
    `run_synth(n=len(all_families()), registry=reg)`: one task per family. ``runner``: a
    Celery executor (harness/queue.py); its workers register in their own registry.
    """
    started = time.monotonic()
    selected = [f.name for f in fams.select(families)]
    if not selected:
        raise UserError("no task families selected", field="--families")
    if n < 1:
        raise UserError("must be at least 1", field="--n", value=n)
    path = state_path(seed, selected)
    if not resume:
        path.unlink(missing_ok=True)
    state = _state(path)
    planned = plan_drafts(selected, n, seed, use_llm=use_llm)
    dedup = _dedup_from_registry(registry)
    outcomes: dict[str, TaskOutcome] = {}
    todo: list[TaskDraft] = []
    resumed = 0
    lock = threading.Lock()
    keys = {item.task_id: _key(item) for item in planned}

    def finish(o: TaskOutcome) -> None:
        with lock:
            outcomes[o.task_id] = o
            state.put(keys[o.task_id], o.model_dump(mode="json"))
            if progress is not None:
                progress(o, len(outcomes), n)

    for item in planned:
        record = state.done(keys[item.task_id])
        if record is not None:
            outcomes[item.task_id] = TaskOutcome.model_validate(
                {k: v for k, v in record.items() if k != "key"})
            resumed += 1
            if progress is not None:
                progress(outcomes[item.task_id], len(outcomes), n)
        elif isinstance(item, TaskOutcome):
            finish(item)
        else:
            todo.append(item)
    if runner is not None:
        for done_ in runner.map(synth_one, [SynthJob(draft=d, oracle_runs=oracle_runs)
                                             for d in todo]):
            d = done_.job.draft
            finish(TaskOutcome.model_validate(done_.value) if done_.ok else _infra(
                d, done_.error.splitlines()[0][:300]))
        todo = []
    pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="synth")
    try:
        futures = {pool.submit(process, d, dedup=dedup, registry=registry,
                               oracle_runs=oracle_runs): d for d in todo}
        for fut in as_completed(futures):
            d = futures[fut]
            try:
                o = fut.result()
            except Exception as exc:  # an engine failure is recorded, the run goes on
                o = _infra(d, f"{type(exc).__name__}: {exc}"[:300])
            finish(o)
    finally:
        # Ctrl-C: the queued drafts never start; those running finish or lose their
        # sandboxes to the CLI's clean-up. What finished is in the state file.
        pool.shutdown(wait=True, cancel_futures=True)
    order = [item.task_id for item in planned]
    return SynthReport(n=n, seed=seed, families=selected, wall_s=time.monotonic() - started,
                       resumed=resumed, outcomes=[outcomes[t] for t in order],
                       state_file=str(path))


def import_task(path: Path, *, registry: Registry | None = None, oracle_runs: int = 3
                ) -> tuple[TerminalTask, TaskOutcome]:
    """Import a Harbor or TB1 directory; registered only if it passes every gate."""
    task = load_task(Path(path))
    dedup = _dedup_from_registry(registry)
    verified, outcome = verify(task, dedup=dedup, oracle_runs=oracle_runs,
                               build_name=f"synth-import-{task.family}")
    if outcome.passed and registry is not None:
        registry.put_terminal_task(verified)
        outcome = outcome.model_copy(update={"registered": True})
    return verified, outcome
