"""What the factory did: runs (`RunRecord`, upserted) and the build transcripts beside
them (`add_attempt`, `list_attempts`: one row per command, in step order)."""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import insert, select

from envs.models import RunRecord
from envs.registry.schema import Attempt, AttemptRow, RunRow, utc_model, value
from envs.registry.store import Store, upsert

__all__ = ["RunStore"]


class RunStore(Store):
    """Runs and their attempts."""

    # -- runs

    def put_run(self, run: RunRecord) -> None:
        run = utc_model(run)
        values = {
            "run_id": run.run_id,
            "kind": run.kind,
            "target": run.target,
            "status": value(run.status),
            "failure_kind": value(run.failure_kind),
            "resolved": run.resolved,
            "started_at": run.started_at,
            "finished_at": run.finished_at,
            "data": run.model_dump(mode="json"),
        }
        self._write(lambda c: upsert(c, RunRow.__table__, values))

    def get_run(self, run_id: str) -> RunRecord | None:
        return self._get(RunRecord, RunRow.data, RunRow.run_id == run_id)

    def list_runs(
        self, kind: str | None = None, target: str | None = None, status: str | None = None
    ) -> list[RunRecord]:
        where = []
        if kind is not None:
            where.append(RunRow.kind == kind)
        if target is not None:
            where.append(RunRow.target == target)
        if status is not None:
            where.append(RunRow.status == value(status))
        return self._list(RunRecord, RunRow.data, RunRow.run_id, where)

    # -- attempts (build transcripts)

    def add_attempt(
        self,
        run_id: str,
        step: int,
        command: str,
        exit_code: int | None,
        output_tail: str,
        seconds: float,
    ) -> int:
        """Append one step of a run's transcript; returns the attempt's id."""
        values = {
            "run_id": run_id,
            "step": step,
            "command": command,
            "exit_code": exit_code,
            "output_tail": output_tail,
            "seconds": seconds,
            "created_at": datetime.now(timezone.utc),
        }
        stmt = insert(AttemptRow).values(values)
        return self._write(lambda c: int(c.execute(stmt).inserted_primary_key[0]))

    def list_attempts(self, run_id: str) -> list[Attempt]:
        stmt = (
            select(AttemptRow.__table__)
            .where(AttemptRow.run_id == run_id)
            .order_by(AttemptRow.step, AttemptRow.id)
        )
        rows = self._read(lambda c: c.execute(stmt).all())
        return [Attempt.model_validate(r._asdict()) for r in rows]
