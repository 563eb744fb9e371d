"""Run job functions on a bounded local process pool.

The job functions are plain, picklable, module-level functions of one argument returning a
JSON-able value — the same ones a distributed executor (Celery) runs — so nothing in the
job code knows where it runs. A worker that dies (killed, OOM) fails only the jobs it held,
with a typed infrastructure outcome; the pool is rebuilt and the rest go on.
"""

from __future__ import annotations

import multiprocessing
import traceback
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from envs.errors import unknown

J = TypeVar("J")


@dataclass(frozen=True)
class Outcome(Generic[J]):
    job: J
    ok: bool
    value: Any = None
    error: str = ""
    worker_died: bool = False  # an infrastructure failure: the job itself never finished


def _call(fn: Callable[[Any], Any], job: Any) -> tuple[bool, Any]:
    try:
        return True, fn(job)
    except Exception as exc:  # the job's own failure travels back as text
        return False, f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"


class LocalExecutor:
    """At most `workers` jobs at once, in separate processes (spawned: no inherited sockets)."""

    def __init__(self, workers: int = 2, *, start_method: str = "spawn") -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.workers = workers
        self._ctx = multiprocessing.get_context(start_method)

    def map(self, fn: Callable[[J], Any], jobs: Iterable[J], *, retries: int = 1
            ) -> Iterator[Outcome[J]]:
        """Yield one Outcome per job, in completion order.

        When a worker dies the pool cannot say which job killed it, so every job it held is
        retried (`retries` times), alone, on a fresh pool; a job that keeps dying fails.
        """
        pending = list(jobs)
        pending.reverse()  # pop() from the end keeps submission order
        deaths: dict[int, int] = {}
        while pending:
            pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=self._ctx)
            running: dict[Future[tuple[bool, Any]], J] = {}
            broken = False
            try:
                while (pending or running) and not broken:
                    # Keep the pool busy but bounded: a queue of a million jobs stays here.
                    while pending and len(running) < self.workers * 2:
                        # A job that was in a dead pool runs alone, so that a culprit that
                        # dies again takes no innocent job with it.
                        if any(id(j) in deaths for j in running.values()):
                            break
                        if id(pending[-1]) in deaths and running:
                            break
                        job = pending.pop()
                        running[pool.submit(_call, fn, job)] = job
                        if id(job) in deaths:
                            break
                    done, _ = wait(list(running), return_when=FIRST_COMPLETED)
                    for fut in done:
                        job = running.pop(fut)
                        try:
                            ok, value = fut.result()
                        except BrokenProcessPool:
                            broken = True
                            running[fut] = job  # handled with the others below
                            continue
                        yield Outcome(job, ok, value if ok else None, "" if ok else value)
                if broken:
                    for job in running.values():
                        deaths[id(job)] = deaths.get(id(job), 0) + 1
                        if deaths[id(job)] > retries:
                            yield Outcome(job, False, error="worker process died",
                                          worker_died=True)
                        else:
                            pending.append(job)
                    running.clear()
            finally:
                pool.shutdown(wait=True, cancel_futures=True)


def run_inline(fn: Callable[[J], Any], jobs: Iterable[J]) -> Iterator[Outcome[J]]:
    """The same contract in this process (debugging, a single job)."""
    for job in jobs:
        ok, value = _call(fn, job)
        yield Outcome(job, ok, value if ok else None, "" if ok else value)



EXECUTORS = ("local", "celery")
EXECUTOR_HELP = ("where jobs run: local (a process pool here) or celery (`envfactory worker` "
                 "processes on any machine; default: ENVFACTORY_EXECUTOR, else local)")


def make_executor(kind: str | None = None, workers: int = 2, *,
                  log: Callable[[str], None] | None = None, force: bool = False) -> Any:
    """The executor an `--executor` option names (None: the settings' choice). Both have
    `map(fn, jobs)` yielding Outcomes; ``force`` makes Celery rerun finished jobs."""
    if kind is None:
        from envs.config import get_settings

        kind = get_settings().executor
    if kind == "local":
        return LocalExecutor(workers=max(1, workers))
    if kind == "celery":
        from harness.queue import CeleryExecutor  # Celery loads only when asked for

        return CeleryExecutor(workers, log=log, force=force)
    raise unknown("executor", kind, EXECUTORS, field="--executor")


def queue_runner(kind: str | None = None, *, log: Callable[[str], None] | None = None,
                 force: bool = False) -> Any:
    """For flows whose local form runs in this process: None when the executor is local,
    else the Celery executor."""
    if kind is None:
        from envs.config import get_settings

        kind = get_settings().executor
    return None if kind == "local" else make_executor(kind, log=log, force=force)
