"""The registry's connection, transaction and migration machinery, under every noun's
methods: `Store` opens the engine (SQLite in WAL mode with writers taking the lock up front,
or any other dialect with pre-pinged connections that a forked child never inherits), runs
each operation in one transaction retried on transient lock errors, and migrates the database
to head once, on open, under a lock. `upsert` is the one insert-or-replace, atomic on every
dialect (`ON_CONFLICT` names those with INSERT ... ON CONFLICT).
"""

from __future__ import annotations

import contextlib
import os
import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel
from sqlalchemy import Table, create_engine, event, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import (
    ArgumentError,
    DisconnectionError,
    IntegrityError,
    NoSuchModuleError,
    OperationalError,
    SQLAlchemyError,
)
from sqlalchemy.pool import StaticPool

from envs.config import get_settings
from envs.errors import UserError
from envs.registry.errors import RegistryError, one_line
from envs.registry.revisions import SCHEMA_REVISION, current_revision, migration_config

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX; migrations then rely on the transaction
    fcntl = None  # type: ignore[assignment]

__all__ = ["BUSY_TIMEOUT", "LOCK_TIMEOUT", "ON_CONFLICT", "RETRY_SECONDS", "Store", "upsert"]

BUSY_TIMEOUT = 30.0  # seconds a SQLite connection waits for a lock before "database is locked"
RETRY_SECONDS = 120.0  # total time a transaction is retried on transient lock errors
LOCK_TIMEOUT = 300.0  # seconds to wait for another process's migration

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")
S = TypeVar("S", bound="Store")


class Store:
    """An open registry database: engine, transactions, migration. Thread-safe (one pooled
    connection per operation) and safe across processes."""

    def __init__(self, url: str | None = None, *, busy_timeout: float = BUSY_TIMEOUT) -> None:
        raw = url or get_settings().registry_url
        try:
            self._url = make_url(raw)
        except ArgumentError as exc:
            raise RegistryError(f"bad registry URL {raw!r}: {one_line(exc)}") from exc
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
            raise RegistryError(f"cannot open registry {self.url}: {one_line(exc)}") from exc

    # -- lifecycle

    @property
    def engine(self) -> Engine:
        return self._engine

    def close(self) -> None:
        self._engine.dispose()

    def __enter__(self: S) -> S:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"

    def schema_revision(self) -> str | None:
        """The Alembic revision the database is at."""
        return self._read(current_revision)

    # -- reading and writing (the nouns' methods go through these)

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
                    raise RegistryError(f"registry {self.url}: {one_line(exc)}") from exc
            # Jittered exponential backoff, so colliding writers spread out.
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 1.0)

    # -- opening

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
            raise UserError(f"cannot open this registry URL: {one_line(exc)}",
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
            if wal_ok and current_revision(conn) == head:
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
                current = current_revision(conn)
                if current == head:  # another process has just done it
                    return
                from alembic import command
                from alembic.util import CommandError

                try:
                    command.upgrade(migration_config(conn), "head")
                except CommandError as exc:  # e.g. a database from a newer envfactory
                    raise RegistryError(
                        f"cannot upgrade registry {self.url} from revision {current} "
                        f"to {head}: {one_line(exc)}"
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
ON_CONFLICT = {"sqlite": sqlite.insert, "postgresql": postgresql.insert}


def upsert(
    conn: Connection, table: Table, values: dict[str, Any], keep: tuple[str, ...] = ()
) -> None:
    """Insert or replace one row by primary key, atomically; `keep` columns survive a replace."""
    pk = [c.name for c in table.primary_key.columns]
    changed = {k: v for k, v in values.items() if k not in pk and k not in keep}
    dialect_insert = ON_CONFLICT.get(conn.dialect.name)
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
