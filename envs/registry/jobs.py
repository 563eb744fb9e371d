"""The job queue's store of record (see harness/queue.py): a job is a row keyed by a hash of
its function and inputs, so enqueueing it twice is one row; a worker claims it with a lease,
renews the lease while it runs, and the first finisher's result is the one that lands.
Statuses: queued, running, done, failed.
"""

from __future__ import annotations

import functools
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection

from envs.registry import store
from envs.registry.schema import JOB_FINAL, JobRecord, JobRow

__all__ = ["JobStore"]


class JobStore(store.Store):
    """Queued work: enqueue, claim with a lease, renew, release, finish, reset."""

    def enqueue_jobs(self, jobs: list[dict[str, Any]]) -> list[JobRecord]:
        """Insert each job (key, kind, fn, payload) unless its key is there; the records of
        all of them, in order. Enqueueing a job twice is one row."""
        now = datetime.now(timezone.utc)
        rows = [{**j, "status": "queued", "attempts": 0, "created_at": now} for j in jobs]

        def tx(c: Connection, chunk: list[dict[str, Any]]) -> None:
            table = JobRow.__table__
            have = set(c.execute(select(JobRow.key).where(
                JobRow.key.in_([r["key"] for r in chunk]))).scalars())
            dialect_insert = store.ON_CONFLICT.get(c.dialect.name)
            for r in chunk:
                if r["key"] in have:
                    continue
                if dialect_insert is not None:  # a row another process just added is skipped
                    c.execute(dialect_insert(table).values(r).on_conflict_do_nothing())
                else:
                    c.execute(insert(table).values(r))

        for i in range(0, len(rows), 500):
            self._write(functools.partial(tx, chunk=rows[i:i + 500]))
        return self.get_jobs([r["key"] for r in rows])

    def get_jobs(self, keys: list[str]) -> list[JobRecord]:
        """The records of these keys that exist, in the order given."""
        found: dict[str, JobRecord] = {}
        for i in range(0, len(keys), 500):
            stmt = select(JobRow.__table__).where(JobRow.key.in_(keys[i:i + 500]))
            for r in self._read(lambda c, stmt=stmt: c.execute(stmt).all()):
                found[r.key] = JobRecord.model_validate(r._asdict())
        return [found[k] for k in keys if k in found]

    def list_jobs(self, kind: str | None = None, status: str | None = None) -> list[JobRecord]:
        stmt = select(JobRow.__table__).order_by(JobRow.created_at, JobRow.key)
        if kind is not None:
            stmt = stmt.where(JobRow.kind == kind)
        if status is not None:
            stmt = stmt.where(JobRow.status == status)
        return [JobRecord.model_validate(r._asdict())
                for r in self._read(lambda c: c.execute(stmt).all())]

    def claim_job(self, key: str, worker: str, lease_s: float, max_attempts: int) -> str:
        """Take a job to run: "run" (it is ours, leased), "done" (finished already: a no-op),
        "busy" (another worker holds a live lease), "exhausted" (claimed `max_attempts`
        times and never finished: it kills its workers, so it is failed) or "missing"."""
        now = datetime.now(timezone.utc)

        def tx(c: Connection) -> str:
            row = c.execute(select(JobRow.__table__).where(JobRow.key == key)
                            .with_for_update()).first()
            if row is None:
                return "missing"
            if row.status in JOB_FINAL:
                return "done"
            if row.status == "running" and row.lease_until is not None and \
                    row.lease_until > now:
                return "busy"
            where = update(JobRow.__table__).where(JobRow.key == key)
            if row.attempts >= max_attempts:
                c.execute(where.values(
                    status="failed", finished_at=now, result={"worker_died": True},
                    error=f"no worker finished it in {row.attempts} attempt(s)"))
                return "exhausted"
            c.execute(where.values(status="running", worker=worker, attempts=row.attempts + 1,
                                   lease_until=now + timedelta(seconds=lease_s)))
            return "run"

        return self._write(tx)

    def renew_job_lease(self, key: str, worker: str, lease_s: float) -> bool:
        until = datetime.now(timezone.utc) + timedelta(seconds=lease_s)
        stmt = update(JobRow.__table__).where(
            JobRow.key == key, JobRow.worker == worker, JobRow.status == "running"
        ).values(lease_until=until)
        return self._write(lambda c: c.execute(stmt).rowcount == 1)

    def release_job(self, key: str, worker: str) -> None:
        """Give a claimed job back to the queue (its transient failure will be retried)."""
        stmt = update(JobRow.__table__).where(
            JobRow.key == key, JobRow.worker == worker, JobRow.status == "running"
        ).values(status="queued", lease_until=None)
        self._write(lambda c: c.execute(stmt))

    def finish_job(self, key: str, *, ok: bool, result: Any = None, error: str | None = None
                   ) -> bool:
        """Record a job's result; True for the first finisher only (the result lands once)."""
        stmt = update(JobRow.__table__).where(
            JobRow.key == key, JobRow.status.not_in(JOB_FINAL)
        ).values(status="done" if ok else "failed", result=result, error=error,
                 lease_until=None, finished_at=datetime.now(timezone.utc))
        return self._write(lambda c: c.execute(stmt).rowcount == 1)

    def reset_jobs(self, keys: list[str]) -> None:
        """Forget the results of finished jobs, so that enqueueing them runs them again."""
        for i in range(0, len(keys), 500):
            stmt = update(JobRow.__table__).where(JobRow.key.in_(keys[i:i + 500])).values(
                status="queued", attempts=0, worker=None, lease_until=None, result=None,
                error=None, finished_at=None)
            self._write(lambda c, stmt=stmt: c.execute(stmt))
