"""The registry: every image, environment, task and run the factory knows, in SQL.

SQLAlchemy 2.x over any URL: SQLite at `get_settings().registry_url` for one machine,
PostgreSQL (or any other dialect) for many. The schema is owned by the Alembic migrations
in `envs/migrations/`; opening a `Registry` upgrades the database to head, once, and is a
single cheap query on a database that is already there.

Each table keeps the indexed columns that are filtered on, and (except `images`, which is
flat) a JSON `data` column holding the full pydantic model, so models round-trip exactly.
Datetimes are stored and returned as tz-aware UTC; naive datetimes are taken to be UTC.

    with Registry() as reg:
        reg.put_swe_task(task)
        todo = reg.list_swe_tasks(language="python")
"""

from __future__ import annotations

import contextlib
import functools
import os
import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel
from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    delete,
    event,
    func,
    insert,
    inspect,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import URL, Connection, Dialect, Engine, make_url
from sqlalchemy.exc import (
    ArgumentError,
    DisconnectionError,
    IntegrityError,
    NoSuchModuleError,
    OperationalError,
    SQLAlchemyError,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.pool import StaticPool
from sqlalchemy.types import TypeDecorator

from envs.config import get_settings
from envs.errors import InfraError, UserError
from envs.models import (
    EnvSpec,
    Frozen,
    ImageRecord,
    RunRecord,
    SWETask,
    TerminalTask,
)

if TYPE_CHECKING:
    from alembic.config import Config

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX; migrations then rely on the transaction
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "SCHEMA_REVISION",
    "Attempt",
    "Base",
    "JobRecord",
    "Registry",
    "RegistryError",
    "head_revision",
    "migration_config",
]

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
# The head of MIGRATIONS_DIR, spelled out so that opening a migrated database needs no Alembic
# import (~100 ms); bump it with every new revision (a test checks the two agree).
SCHEMA_REVISION = "0002"
BUSY_TIMEOUT = 30.0  # seconds a SQLite connection waits for a lock before "database is locked"
RETRY_SECONDS = 120.0  # total time a transaction is retried on transient lock errors
LOCK_TIMEOUT = 300.0  # seconds to wait for another process's migration

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


class RegistryError(InfraError):
    """The registry cannot be opened or used; the message says why in one line."""


# --------------------------------------------------------------------------- schema


class UTCDateTime(TypeDecorator[datetime]):
    """A datetime that is tz-aware UTC in Python on every dialect.

    SQLite has no time zones, so it stores naive UTC; dialects with `timestamptz` get an
    aware value. Either way what comes back is aware UTC.
    """

    impl = DateTime
    cache_ok = True

    def __init__(self) -> None:
        super().__init__(timezone=True)

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = _as_utc(value)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else _as_utc(value)


class Base(DeclarativeBase):
    # Explicit constraint names, so later migrations can alter them on every dialect.
    metadata = MetaData(
        naming_convention={
            "ix": "ix_%(table_name)s_%(column_0_name)s",
            "uq": "uq_%(table_name)s_%(column_0_name)s",
            "ck": "ck_%(table_name)s_%(constraint_name)s",
            "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
            "pk": "pk_%(table_name)s",
        }
    )


class ImageRow(Base):
    __tablename__ = "images"

    tag: Mapped[str] = mapped_column(String(512), primary_key=True)
    kind: Mapped[str] = mapped_column(String(64), index=True)
    language: Mapped[str | None] = mapped_column(String(32), index=True)
    parent: Mapped[str | None] = mapped_column(String(512))
    content_hash: Mapped[str] = mapped_column(String(128))
    size_bytes: Mapped[int | None] = mapped_column(BigInteger)
    versions: Mapped[dict[str, str]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class EnvironmentRow(Base):
    __tablename__ = "environments"

    name: Mapped[str] = mapped_column(String(255), primary_key=True)
    language: Mapped[str] = mapped_column(String(32), index=True)
    image: Mapped[str | None] = mapped_column(String(512))
    fingerprint: Mapped[str | None] = mapped_column(String(128))
    spec: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class SWETaskRow(Base):
    __tablename__ = "swe_tasks"

    instance_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    repo: Mapped[str] = mapped_column(String(255), index=True)
    language: Mapped[str | None] = mapped_column(String(32), index=True)
    base_commit: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(32), index=True)
    created_at: Mapped[str] = mapped_column(String(64))  # SWETask.created_at, as given (ISO)
    env_name: Mapped[str | None] = mapped_column(String(255))
    data: Mapped[dict[str, Any]] = mapped_column(JSON)


class TerminalTaskRow(Base):
    __tablename__ = "terminal_tasks"

    task_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    family: Mapped[str] = mapped_column(String(128), index=True)
    category: Mapped[str] = mapped_column(String(128), index=True)
    difficulty: Mapped[str] = mapped_column(String(32))
    data: Mapped[dict[str, Any]] = mapped_column(JSON)


class RunRow(Base):
    __tablename__ = "runs"

    run_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    kind: Mapped[str] = mapped_column(String(64), index=True)
    target: Mapped[str] = mapped_column(String(512), index=True)
    status: Mapped[str] = mapped_column(String(32), index=True)
    failure_kind: Mapped[str] = mapped_column(String(32))
    resolved: Mapped[bool | None] = mapped_column(Boolean)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    data: Mapped[dict[str, Any]] = mapped_column(JSON)


class AttemptRow(Base):
    """One command of a build transcript. `run_id` is not a foreign key on purpose: a
    builder records attempts before (or without) the run row existing."""

    __tablename__ = "attempts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(String(255), index=True)
    step: Mapped[int] = mapped_column(Integer)
    command: Mapped[str] = mapped_column(Text)
    exit_code: Mapped[int | None] = mapped_column(Integer)
    output_tail: Mapped[str] = mapped_column(Text)
    seconds: Mapped[float] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class JobRow(Base):
    """Queued work (see harness/queue.py): keyed by a hash of the job function and inputs."""

    __tablename__ = "jobs"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(String(64), index=True)
    fn: Mapped[str] = mapped_column(String(255))
    payload: Mapped[Any] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(16), index=True)
    attempts: Mapped[int] = mapped_column(Integer)
    worker: Mapped[str | None] = mapped_column(String(255))
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    result: Mapped[Any] = mapped_column(JSON, nullable=True)
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


_TABLES: dict[str, Table] = {
    cls.__tablename__: cls.__table__  # type: ignore[misc]
    for cls in (ImageRow, EnvironmentRow, SWETaskRow, TerminalTaskRow, RunRow, AttemptRow,
                JobRow)
}

JOB_FINAL = ("done", "failed")


class JobRecord(Frozen):
    """One job as the registry holds it (statuses: queued, running, done, failed)."""

    key: str
    kind: str
    fn: str
    payload: Any
    status: str
    attempts: int
    worker: str | None
    lease_until: datetime | None
    result: Any
    error: str | None
    created_at: datetime
    finished_at: datetime | None


class Attempt(Frozen):
    """One step of a build transcript, as `list_attempts` returns it."""

    id: int
    run_id: str
    step: int
    command: str
    exit_code: int | None
    output_tail: str
    seconds: float
    created_at: datetime


# --------------------------------------------------------------------------- migrations


def migration_config(connection: Connection | None = None, url: str | None = None) -> Config:
    """An Alembic `Config` built in code (no alembic.ini): our scripts, and the connection
    (or URL) env.py should migrate."""
    from alembic.config import Config  # Alembic is imported only when migrating

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("path_separator", "os")
    if url is not None:
        cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


@functools.lru_cache(maxsize=1)
def head_revision() -> str:
    """The newest migration revision shipped with this code."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(migration_config()).get_current_head()
    if head is None:
        raise RegistryError(f"no migrations under {MIGRATIONS_DIR}")
    return head


def _current_revision(conn: Connection) -> str | None:
    """The revision in alembic_version, read directly: the check on every open stays cheap
    and needs no Alembic import."""
    if not inspect(conn).has_table("alembic_version"):
        return None
    versions = conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalars().all()
    return versions[0] if len(versions) == 1 else None


# --------------------------------------------------------------------------- registry


class Registry:
    """The registry of images, environments, SWE tasks, terminal tasks, runs and attempts.

    Thread-safe (one pooled connection per operation) and safe across processes. `put_*`
    is an upsert; `get_*` returns the pydantic model or None; `list_*` orders by key.
    """

    def __init__(self, url: str | None = None, *, busy_timeout: float = BUSY_TIMEOUT) -> None:
        raw = url or get_settings().registry_url
        try:
            self._url = make_url(raw)
        except ArgumentError as exc:
            raise RegistryError(f"bad registry URL {raw!r}: {_one_line(exc)}") from exc
        self.url = self._url.render_as_string(hide_password=True)
        self._busy_timeout = busy_timeout
        self._engine = self._make_engine()
        try:
            self._migrate()
        except RegistryError:
            self._engine.dispose()
            raise
        except (SQLAlchemyError, OSError) as exc:
            self._engine.dispose()
            raise RegistryError(f"cannot open registry {self.url}: {_one_line(exc)}") from exc

    # -- lifecycle

    @property
    def engine(self) -> Engine:
        return self._engine

    def close(self) -> None:
        self._engine.dispose()

    def __enter__(self) -> Registry:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Registry({self.url!r})"

    def schema_revision(self) -> str | None:
        """The Alembic revision the database is at."""
        return self._read(_current_revision)

    # -- images

    def put_image(self, image: ImageRecord) -> None:
        values = {
            "tag": image.tag,
            "kind": image.kind,
            "language": _value(image.language),
            "parent": image.parent,
            "content_hash": image.content_hash,
            "size_bytes": image.size_bytes,
            "versions": dict(image.versions),
            "created_at": image.created_at,
        }
        self._write(lambda c: _upsert(c, ImageRow.__table__, values))

    def get_image(self, tag: str) -> ImageRecord | None:
        stmt = select(ImageRow.__table__).where(ImageRow.tag == tag)
        rows = self._read(lambda c: c.execute(stmt).all())
        return _image(rows[0]) if rows else None

    def list_images(self, kind: str | None = None) -> list[ImageRecord]:
        stmt = select(ImageRow.__table__).order_by(ImageRow.tag)
        if kind is not None:
            stmt = stmt.where(ImageRow.kind == kind)
        return [_image(r) for r in self._read(lambda c: c.execute(stmt).all())]

    def delete_image(self, tag: str) -> bool:
        """Forget an image; True when there was one."""
        stmt = delete(ImageRow).where(ImageRow.tag == tag)
        return self._write(lambda c: c.execute(stmt).rowcount) > 0

    # -- environments

    def put_env(self, spec: EnvSpec) -> None:
        now = datetime.now(timezone.utc)
        values = {
            "name": spec.name,
            "language": _value(spec.language),
            "image": spec.image,
            "fingerprint": spec.fingerprint,
            "spec": spec.model_dump(mode="json"),
            "created_at": now,
            "updated_at": now,
        }
        # created_at is the first registration; a replace keeps it.
        self._write(lambda c: _upsert(c, EnvironmentRow.__table__, values, keep=("created_at",)))

    def get_env(self, name: str) -> EnvSpec | None:
        return self._get(EnvSpec, EnvironmentRow.spec, EnvironmentRow.name == name)

    def list_envs(self, language: str | None = None) -> list[EnvSpec]:
        where = [] if language is None else [EnvironmentRow.language == _value(language)]
        return self._list(EnvSpec, EnvironmentRow.spec, EnvironmentRow.name, where)

    # -- SWE tasks

    def put_swe_task(self, task: SWETask) -> None:
        self.put_swe_tasks([task])

    def put_swe_tasks(self, tasks: list[SWETask]) -> None:
        """Upsert every task in one transaction: all of them land, or none (an import)."""
        rows = [{
            "instance_id": task.instance_id,
            "repo": task.repo,
            "language": _value(task.language),
            "base_commit": task.base_commit,
            "kind": _value(task.kind),
            "created_at": task.created_at,
            "env_name": task.env_spec.name if task.env_spec else None,
            "data": task.model_dump(mode="json"),
        } for task in tasks]

        def tx(c: Connection) -> None:
            for values in rows:
                _upsert(c, SWETaskRow.__table__, values)

        self._write(tx)

    def get_swe_task(self, instance_id: str) -> SWETask | None:
        return self._get(SWETask, SWETaskRow.data, SWETaskRow.instance_id == instance_id)

    def list_swe_tasks(
        self, repo: str | None = None, language: str | None = None, kind: str | None = None
    ) -> list[SWETask]:
        where = []
        if repo is not None:
            where.append(SWETaskRow.repo == repo)
        if language is not None:
            where.append(SWETaskRow.language == _value(language))
        if kind is not None:
            where.append(SWETaskRow.kind == _value(kind))
        return self._list(SWETask, SWETaskRow.data, SWETaskRow.instance_id, where)

    # -- terminal tasks

    def put_terminal_task(self, task: TerminalTask) -> None:
        self.put_terminal_tasks([task])

    def put_terminal_tasks(self, tasks: list[TerminalTask]) -> None:
        """Upsert every terminal task in one transaction."""
        rows = []
        for task in tasks:
            task = _utc_model(task)
            rows.append({
                "task_id": task.task_id,
                "family": task.family,
                "category": task.category,
                "difficulty": _value(task.difficulty),
                "data": task.model_dump(mode="json"),
            })

        def tx(c: Connection) -> None:
            for values in rows:
                _upsert(c, TerminalTaskRow.__table__, values)

        self._write(tx)

    def get_terminal_task(self, task_id: str) -> TerminalTask | None:
        return self._get(TerminalTask, TerminalTaskRow.data, TerminalTaskRow.task_id == task_id)

    def list_terminal_tasks(
        self, family: str | None = None, category: str | None = None
    ) -> list[TerminalTask]:
        where = []
        if family is not None:
            where.append(TerminalTaskRow.family == family)
        if category is not None:
            where.append(TerminalTaskRow.category == category)
        return self._list(TerminalTask, TerminalTaskRow.data, TerminalTaskRow.task_id, where)

    # -- runs

    def put_run(self, run: RunRecord) -> None:
        run = _utc_model(run)
        values = {
            "run_id": run.run_id,
            "kind": run.kind,
            "target": run.target,
            "status": _value(run.status),
            "failure_kind": _value(run.failure_kind),
            "resolved": run.resolved,
            "started_at": run.started_at,
            "finished_at": run.finished_at,
            "data": run.model_dump(mode="json"),
        }
        self._write(lambda c: _upsert(c, RunRow.__table__, values))

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
            where.append(RunRow.status == _value(status))
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

    # -- jobs (the queue's store of record; see harness/queue.py)

    def enqueue_jobs(self, jobs: list[dict[str, Any]]) -> list[JobRecord]:
        """Insert each job (key, kind, fn, payload) unless its key is there; the records of
        all of them, in order. Enqueueing a job twice is one row."""
        now = datetime.now(timezone.utc)
        rows = [{**j, "status": "queued", "attempts": 0, "created_at": now} for j in jobs]

        def tx(c: Connection, chunk: list[dict[str, Any]]) -> None:
            table = JobRow.__table__
            have = set(c.execute(select(JobRow.key).where(
                JobRow.key.in_([r["key"] for r in chunk]))).scalars())
            dialect_insert = _ON_CONFLICT.get(c.dialect.name)
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

    # -- misc

    def count(self, table_name: str) -> int:
        """Rows in one of the registry's tables (images, environments, swe_tasks,
        terminal_tasks, runs, attempts)."""
        table = _TABLES.get(table_name)
        if table is None:
            raise ValueError(f"no registry table {table_name!r} (one of {', '.join(_TABLES)})")
        stmt = select(func.count()).select_from(table)
        return self._read(lambda c: int(c.execute(stmt).scalar_one()))

    # -- internals

    def _get(self, model: type[M], column: Any, where: Any) -> M | None:
        data = self._read(lambda c: c.execute(select(column).where(where)).scalar_one_or_none())
        return None if data is None else model.model_validate(data)

    def _list(self, model: type[M], column: Any, order: Any, where: list[Any]) -> list[M]:
        stmt = select(column).where(*where).order_by(order)
        rows = self._read(lambda c: c.execute(stmt).scalars().all())
        return [model.model_validate(d) for d in rows]

    def _read(self, fn: Callable[[Connection], T]) -> T:
        return self._transaction(fn, write=False)

    def _write(self, fn: Callable[[Connection], T]) -> T:
        return self._transaction(fn, write=True)

    def _transaction(self, fn: Callable[[Connection], T], *, write: bool) -> T:
        """Run fn in one transaction, retrying the whole of it on transient lock errors."""
        deadline = time.monotonic() + RETRY_SECONDS
        delay = 0.01
        while True:
            try:
                with self._engine.connect() as conn:
                    conn.execution_options(envfactory_write=write)
                    with conn.begin():
                        return fn(conn)
            except (OperationalError, _Conflict) as exc:
                transient = isinstance(exc, _Conflict) or _is_locked(exc)
                if not transient or time.monotonic() + delay > deadline:
                    raise RegistryError(f"registry {self.url}: {_one_line(exc)}") from exc
            # Jittered exponential backoff, so colliding writers spread out.
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 1.0)

    def _make_engine(self) -> Engine:
        url = self._url
        try:
            if url.get_backend_name() == "sqlite":
                engine = self._sqlite_engine(url)
            elif url.get_backend_name() == "postgresql":
                # A host that drops packets would otherwise hang the first query for minutes.
                engine = create_engine(
                    url, pool_pre_ping=True, connect_args={"connect_timeout": 10}
                )
            else:
                engine = create_engine(url, pool_pre_ping=True)
        except ImportError as exc:
            raise RegistryError(
                f"cannot open registry {self.url}: no driver for {url.drivername} ({exc})"
            ) from exc
        except OSError as exc:
            raise RegistryError(
                f"cannot open registry {self.url}: cannot create its folder ({exc})"
            ) from exc
        except (ArgumentError, NoSuchModuleError, TypeError) as exc:  # the URL itself
            raise UserError(f"cannot open this registry URL: {_one_line(exc)}",
                            field="--db-url / ENVFACTORY_DB_URL", value=self.url) from exc
        _guard_fork(engine)
        return engine

    def _sqlite_engine(self, url: URL) -> Engine:
        path = _sqlite_file(url)
        kwargs: dict[str, Any] = {}
        if path is None:
            # A private in-memory database exists per connection: share one.
            kwargs["poolclass"] = StaticPool
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": self._busy_timeout},
            **kwargs,
        )
        busy_ms = int(self._busy_timeout * 1000)

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn: Any, record: Any) -> None:
            # sqlite3's own transaction handling never BEGINs before SELECT or DDL;
            # we emit BEGIN ourselves (below) so transactions mean what they say.
            dbapi_conn.isolation_level = None
            cur = dbapi_conn.cursor()
            cur.execute(f"PRAGMA busy_timeout = {busy_ms}")
            cur.execute("PRAGMA synchronous = NORMAL")  # durable enough under WAL, much faster
            cur.execute("PRAGMA foreign_keys = ON")
            cur.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn: Connection) -> None:
            # Writers take the write lock up front: a deferred transaction that reads and
            # then writes fails at once with SQLITE_BUSY under WAL, busy_timeout or not.
            write = conn.get_execution_options().get("envfactory_write", False)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

        return engine

    def _migrate(self) -> None:
        head = SCHEMA_REVISION
        sqlite_file = _sqlite_file(self._url) if self._url.get_backend_name() == "sqlite" else None
        with self._engine.connect() as conn:
            wal_ok = sqlite_file is None or _journal_mode(conn) == "wal"
            if wal_ok and _current_revision(conn) == head:
                return  # the common case: one query, no Alembic machinery
        with self._migration_lock():
            if sqlite_file is not None:
                with self._engine.connect() as conn, contextlib.suppress(sqlite3.Error):
                    # Persistent in the file, so once is enough; outside a transaction.
                    # Should a reader from elsewhere block it, rollback journaling still works.
                    _journal_mode(conn, "wal")

            def upgrade(conn: Connection) -> None:
                if conn.dialect.name == "postgresql":
                    conn.exec_driver_sql("SELECT pg_advisory_xact_lock(7353280)")
                current = _current_revision(conn)
                if current == head:  # another process has just done it
                    return
                from alembic import command
                from alembic.util import CommandError

                try:
                    command.upgrade(migration_config(conn), "head")
                except CommandError as exc:  # e.g. a database from a newer envfactory
                    raise RegistryError(
                        f"cannot upgrade registry {self.url} from revision {current} "
                        f"to {head}: {_one_line(exc)}"
                    ) from exc

            try:
                self._write(upgrade)
            except (RegistryError, SQLAlchemyError):
                # On a dialect without a lock, a concurrent migrator may have won the race.
                if self.schema_revision() != head:
                    raise

    @contextlib.contextmanager
    def _migration_lock(self) -> Iterator[None]:
        """Serialise migrations of a SQLite file across processes with a lock file beside it."""
        path = _sqlite_file(self._url) if self._url.get_backend_name() == "sqlite" else None
        if path is None or fcntl is None:
            yield
            return
        fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            deadline = time.monotonic() + LOCK_TIMEOUT
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise RegistryError(
                            f"registry {self.url}: timed out waiting for {path}.lock"
                        ) from None
                    time.sleep(0.05)
            yield
        finally:
            os.close(fd)  # releases the lock


# --------------------------------------------------------------------------- helpers


class _Conflict(Exception):
    """A concurrent insert beat the portable update-then-insert upsert; retry it."""


# Dialects with INSERT ... ON CONFLICT DO UPDATE; the rest get update-then-insert.
_ON_CONFLICT = {"sqlite": sqlite.insert, "postgresql": postgresql.insert}


def _upsert(
    conn: Connection, table: Table, values: dict[str, Any], keep: tuple[str, ...] = ()
) -> None:
    """Insert or replace one row by primary key, atomically; `keep` columns survive a replace."""
    pk = [c.name for c in table.primary_key.columns]
    changed = {k: v for k, v in values.items() if k not in pk and k not in keep}
    dialect_insert = _ON_CONFLICT.get(conn.dialect.name)
    if dialect_insert is not None:
        stmt = dialect_insert(table).values(values)
        stmt = stmt.on_conflict_do_update(
            index_elements=pk, set_={k: stmt.excluded[k] for k in changed}
        )
        conn.execute(stmt)
        return
    match = [table.c[k] == values[k] for k in pk]
    if conn.execute(update(table).where(*match).values(changed)).rowcount == 0:
        try:
            conn.execute(insert(table).values(values))
        except IntegrityError as exc:
            raise _Conflict(str(exc)) from exc


def _image(row: Any) -> ImageRecord:
    return ImageRecord(
        tag=row.tag,
        kind=row.kind,
        language=row.language,
        parent=row.parent,
        content_hash=row.content_hash,
        size_bytes=row.size_bytes,
        versions=row.versions or {},
        created_at=row.created_at,
    )


def _value(x: Any) -> Any:
    return x.value if isinstance(x, Enum) else x


def _as_utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def _utc_model(model: M) -> M:
    """The model with every datetime in it (nested models and lists too) as aware UTC."""
    updates = {}
    for name in type(model).model_fields:
        value = getattr(model, name)
        new = _utc_value(value)
        if new is not value:
            updates[name] = new
    return model.model_copy(update=updates) if updates else model


def _utc_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return _as_utc(value)
    if isinstance(value, BaseModel):
        return _utc_model(value)
    if isinstance(value, (list, tuple)) and any(
        isinstance(v, (BaseModel, datetime)) for v in value
    ):
        return type(value)(_utc_value(v) for v in value)
    return value


def _sqlite_file(url: URL) -> Path | None:
    """The file of a SQLite URL, or None for in-memory and `file:` URI databases."""
    db = url.database
    if not db or db == ":memory:" or db.startswith("file:") or url.query.get("mode") == "memory":
        return None
    return Path(db)


def _journal_mode(conn: Connection, set_to: str | None = None) -> str:
    # On the raw connection: SQLAlchemy would BEGIN first, and WAL cannot be entered
    # inside a transaction.
    raw = conn.connection.dbapi_connection
    assert raw is not None
    sql = "PRAGMA journal_mode" if set_to is None else f"PRAGMA journal_mode = {set_to}"
    cur = raw.cursor()
    try:
        cur.execute(sql)
        return str(cur.fetchone()[0]).lower()
    finally:
        cur.close()


def _is_locked(exc: OperationalError) -> bool:
    text = str(exc.orig if exc.orig is not None else exc).lower()
    return any(s in text for s in _TRANSIENT)


_TRANSIENT = (
    "database is locked",  # SQLite: busy_timeout ran out
    "database table is locked",
    "database is busy",
    "deadlock detected",  # PostgreSQL: one of two deadlocked transactions is cancelled
)


def _guard_fork(engine: Engine) -> None:
    """Never hand a connection opened in a parent process to a forked child (the local
    process pool forks): the child opens its own instead."""

    @event.listens_for(engine, "connect")
    def _remember_pid(dbapi_conn: Any, record: Any) -> None:
        record.info["pid"] = os.getpid()

    @event.listens_for(engine, "checkout")
    def _check_pid(dbapi_conn: Any, record: Any, proxy: Any) -> None:
        if record.info.get("pid") != os.getpid():
            record.dbapi_connection = proxy.dbapi_connection = None
            raise DisconnectionError("connection belongs to another process")


def _one_line(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc) or type(exc).__name__
    return " ".join(text.split("\n")[0].split())
