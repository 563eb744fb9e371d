"""Jobs on Celery: Redis carries the messages, the registry's `jobs` table is the record.

The same job functions the local pool runs (module-level, one argument, a JSON-able result)
run on `envfactory worker` processes on any number of machines; `CeleryExecutor.map` has
`LocalExecutor.map`'s contract, so no job code knows which one runs it.

- A job's key is a hash of its function and inputs. Enqueueing is insert-if-absent, so a
  job enqueued twice is one row, and a finished job enqueued again is a no-op that returns
  the stored result.
- A message carries only the key; the payload and the result live in the registry. A worker
  claims the row with a lease it renews while it works; the first finisher writes the
  result, once (`Registry.finish_job` is a conditional update).
- Messages are acknowledged late and rejected when their worker dies, so Redis gives them
  to another worker. A worker killed outright (SIGKILL, a lost machine) stops renewing its
  lease: when it runs out, the message comes back (the broker's visibility timeout, or the
  submitter, which re-sends jobs whose lease ran out), and the next claim takes it over. A
  job claimed `queue_max_attempts` times without finishing is failed as `worker_died`.
- Transient failures (the broker, the database or the Docker engine unreachable) are retried
  with exponential backoff; a job's own exception is its result (a failed outcome).
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
import logging
import os
import socket
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timezone
from typing import Any, TypeVar

from celery import Celery
from pydantic import BaseModel

from envs.config import get_settings
from envs.errors import InfraError
from harness.executor import Outcome

J = TypeVar("J")

TASK_NAME = "envfactory.job"
QUEUE = "envfactory"
TRANSIENT_RETRIES = 4


class QueueError(InfraError):
    """The queue cannot be used (no broker, a job that cannot travel); one line says why."""


# --------------------------------------------------------------------------- job encoding


def fn_path(fn: Callable[..., Any]) -> str:
    """`module:qualname` of a module-level function: what a worker imports to run it."""
    qual = getattr(fn, "__qualname__", "")
    if not qual or "<" in qual:  # lambdas and nested functions cannot be imported
        raise QueueError(f"a queued job function must be module-level, not {qual or fn!r}")
    return f"{fn.__module__}:{qual}"


def resolve(path: str) -> Any:
    module, _, qual = path.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qual.split("."):
        obj = getattr(obj, part)
    return obj


def encode(job: Any) -> dict[str, Any]:
    """A job as JSON: pydantic models and dataclasses by type, anything else as a value."""
    if isinstance(job, BaseModel):
        return {"model": fn_path(type(job)), "data": job.model_dump(mode="json")}
    if dataclasses.is_dataclass(job) and not isinstance(job, type):
        return {"dataclass": fn_path(type(job)), "data": dataclasses.asdict(job)}
    try:
        return {"value": json.loads(json.dumps(job))}
    except (TypeError, ValueError) as exc:
        raise QueueError(f"a queued job must be JSON, a pydantic model or a dataclass: "
                         f"{type(job).__name__} is not ({exc})") from None


def decode(payload: dict[str, Any]) -> Any:
    if "model" in payload:
        return resolve(payload["model"]).model_validate(payload["data"])
    if "dataclass" in payload:
        return resolve(payload["dataclass"])(**payload["data"])
    return payload["value"]


def job_key(path: str, payload: dict[str, Any]) -> str:
    text = json.dumps([path, payload], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def job_kind(path: str) -> str:
    """A short label for the registry: the job function's name without `_one`/`_job`."""
    name = path.rpartition(":")[2].rpartition(".")[2]
    for suffix in ("_one", "_job"):
        name = name.removesuffix(suffix)
    return name[:64]


# --------------------------------------------------------------------------- the app


def make_app(broker_url: str | None = None) -> Celery:
    settings = get_settings()
    celery_app = Celery("envfactory", broker=broker_url or settings.broker_url)
    celery_app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,  # a worker holds one job per process, not a backlog
        task_serializer="json",
        accept_content=["json"],
        task_ignore_result=True,  # results live in the registry, not in Redis
        task_default_queue=QUEUE,
        broker_connection_retry_on_startup=True,
        broker_transport_options={
            "visibility_timeout": settings.queue_visibility_s,
            # Sweep the unacked messages of dead workers often, not every ~100 s.
            "unacked_restore_interval": 5,
            "unacked_restore_throttle": 1,
        },
        worker_hijack_root_logger=False,
    )
    celery_app.task(name=TASK_NAME, bind=True, max_retries=None)(_run_job)
    return celery_app


_registries: dict[int, Any] = {}


def _registry() -> Any:
    """One registry per process (a forked worker child opens its own)."""
    from envs.registry import Registry

    pid = os.getpid()
    if pid not in _registries:
        _registries[pid] = Registry()
    return _registries[pid]


def worker_id() -> str:
    return f"{socket.gethostname()}/{os.getpid()}"


def _transient() -> tuple[type[BaseException], ...]:
    import requests

    return (ConnectionError, TimeoutError, requests.exceptions.ConnectionError)


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"


def _run_job(task: Any, key: str) -> str:
    """The one Celery task: claim the job row, run its function, record the result once."""
    settings = get_settings()
    reg, me = _registry(), worker_id()
    lease = settings.queue_lease_s
    state = reg.claim_job(key, me, lease, settings.queue_max_attempts)
    if state == "busy":  # another live worker has it; look again when its lease may be out
        raise task.retry(countdown=max(1.0, lease / 2))
    if state == "missing":  # a submitter on another registry: say so where it is seen
        logging.getLogger(__name__).error(
            "job %s is not in the registry %s: the submitter and this worker must share "
            "one registry (ENVFACTORY_DB_URL)", key[:12], reg.url)
    if state != "run":
        return state
    record = reg.get_jobs([key])[0]
    stop = threading.Event()

    def heartbeat() -> None:
        while not stop.wait(lease / 3):
            try:
                reg.renew_job_lease(key, me, lease)
            except Exception:  # a missed beat only risks a duplicate run, never a result
                continue

    beat = threading.Thread(target=heartbeat, name=f"lease-{key[:8]}", daemon=True)
    beat.start()
    try:
        value = resolve(record.fn)(decode(record.payload))
        ok, error = True, None
    except _transient() as exc:
        reg.release_job(key, me)
        if task.request.retries < TRANSIENT_RETRIES:
            raise task.retry(exc=exc, countdown=2 ** task.request.retries) from None
        ok, value, error = False, {"worker_died": False}, _describe(exc)
    except Exception as exc:  # the job's own failure is its result
        ok, value, error = False, {"worker_died": False}, _describe(exc)
    finally:
        stop.set()
    reg.finish_job(key, ok=ok, result=value, error=error)
    return "done"


app = make_app()


# --------------------------------------------------------------------------- submitting


class CeleryExecutor:
    """`LocalExecutor.map`'s contract over Celery workers (started with `envfactory worker`).

    `workers` is kept for the common signature: concurrency is the workers' own."""

    def __init__(self, workers: int = 0, *, broker_url: str | None = None,
                 registry: Any = None, poll_s: float = 0.5,
                 wait_timeout: float | None = None, force: bool = False,
                 log: Callable[[str], None] | None = None) -> None:
        self.workers = workers
        self._app = make_app(broker_url) if broker_url else app
        self._registry = registry
        self._poll = poll_s
        self._wait_timeout = wait_timeout
        self._force = force
        self._log = log or (lambda _m: None)

    def _send(self, key: str) -> None:
        try:
            self._app.send_task(TASK_NAME, args=[key], queue=QUEUE)
        except Exception as exc:  # kombu's errors differ per transport: one line for all
            raise QueueError(f"cannot reach the broker at "
                             f"{self._app.conf.broker_url}: {str(exc).splitlines()[0]}") from None

    def map(self, fn: Callable[[J], Any], jobs: Iterable[J], *, retries: int = 1
            ) -> Iterator[Outcome[J]]:
        """Enqueue every job, then yield one Outcome per job as the registry records it.
        `retries` belongs to the local pool; here `ENVFACTORY_QUEUE_MAX_ATTEMPTS` rules."""
        from envs.registry import Registry

        path = fn_path(fn)
        items = list(jobs)
        rows = []
        for job in items:
            payload = encode(job)
            rows.append({"key": job_key(path, payload), "kind": job_kind(path), "fn": path,
                         "payload": payload})
        reg = self._registry or Registry()
        try:
            yield from self._collect(reg, items, rows)
        finally:
            if self._registry is None:
                reg.close()

    def _collect(self, reg: Any, items: list[Any], rows: list[dict[str, Any]]
                 ) -> Iterator[Outcome[Any]]:
        keys = [r["key"] for r in rows]
        if self._force:
            reg.reset_jobs(keys)
        by_key: dict[str, list[Any]] = {}
        for key, job in zip(keys, items, strict=True):
            by_key.setdefault(key, []).append(job)
        records = {r.key: r for r in reg.enqueue_jobs(rows)}
        pending: dict[str, float] = {}
        for key in by_key:
            record = records[key]
            if record.status in ("done", "failed"):
                yield from self._outcomes(by_key[key], record)
            else:
                self._send(key)
                pending[key] = time.monotonic()
        if pending:
            self._log(f"{len(pending)} job(s) queued on {self._app.conf.broker_url}")
        lease = get_settings().queue_lease_s
        started = time.monotonic()
        while pending:
            time.sleep(self._poll)
            now = time.monotonic()
            for record in reg.get_jobs(list(pending)):
                if record.status in ("done", "failed"):
                    del pending[record.key]
                    yield from self._outcomes(by_key[record.key], record)
                elif now - pending[record.key] > lease and _lapsed(record):
                    # Its message or its worker is gone: send it again (a claim with a live
                    # lease elsewhere makes the duplicate a no-op).
                    self._send(record.key)
                    pending[record.key] = now
            if self._wait_timeout is not None and now - started > self._wait_timeout:
                raise QueueError(f"{len(pending)} job(s) not finished after "
                                 f"{self._wait_timeout:.0f}s: is an `envfactory worker` "
                                 f"running against {self._app.conf.broker_url}?")

    @staticmethod
    def _outcomes(jobs: list[Any], record: Any) -> Iterator[Outcome[Any]]:
        ok = record.status == "done"
        died = bool(isinstance(record.result, dict) and record.result.get("worker_died"))
        for job in jobs:
            yield Outcome(job, ok, record.result if ok else None,
                          "" if ok else (record.error or "failed"), worker_died=died and not ok)


def _lapsed(record: Any) -> bool:
    """Queued (its message may be lost) or running on a lease that ran out."""
    if record.status == "queued":
        return True
    return record.lease_until is None or record.lease_until < datetime.now(timezone.utc)


# --------------------------------------------------------------------------- the worker


def run_worker(*, concurrency: int = 2, loglevel: str = "INFO",
               broker_url: str | None = None, name: str | None = None) -> None:
    """Run a Celery worker in this process until it is stopped (`envfactory worker`)."""
    worker_app = make_app(broker_url) if broker_url else app
    try:  # sandboxes of a worker that was killed on this host: its jobs will run again
        from envs.sandbox import gc

        gc()
    except Exception:  # no engine here (yet): jobs that need one will say so
        pass
    argv = ["worker", f"--concurrency={concurrency}", "-Q", QUEUE, f"--loglevel={loglevel}",
            "-n", name or f"envfactory-{os.getpid()}@%h",
            # No chatter between workers: they share nothing but the queue and the registry.
            "--without-gossip", "--without-mingle", "--without-heartbeat"]
    worker_app.worker_main(argv=argv)

