"""The registry's tables as SQLAlchemy 2 ORM rows (`Base.metadata` is what the Alembic
migrations must build), the records read back from them (`JobRecord`, `Attempt`), and how a
model's values go into a row: enums as their values, datetimes as aware UTC (`UTCDateTime`
stores naive UTC on SQLite, `timestamptz` elsewhere).
"""

from __future__ import annotations

from datetime import datetime, timezone
from enum import Enum
from typing import Any, TypeVar

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
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from envs.models import Frozen

__all__ = ["JOB_FINAL", "TABLES", "Attempt", "AttemptRow", "Base", "EnvironmentRow",
           "ImageRow", "JobRecord", "JobRow", "RunRow", "SWETaskRow", "TerminalTaskRow",
           "UTCDateTime", "as_utc", "utc_model", "value"]

M = TypeVar("M", bound=BaseModel)


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
        value = as_utc(value)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else as_utc(value)


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


TABLES: dict[str, Table] = {
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


# --------------------------------------------------------------------------- models -> rows


def value(x: Any) -> Any:
    return x.value if isinstance(x, Enum) else x


def as_utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def utc_model(model: M) -> M:
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
        return as_utc(value)
    if isinstance(value, BaseModel):
        return utc_model(value)
    if isinstance(value, (list, tuple)) and any(
        isinstance(v, (BaseModel, datetime)) for v in value
    ):
        return type(value)(_utc_value(v) for v in value)
    return value
