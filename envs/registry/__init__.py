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

This module is the package's public face; `core.py` says where each part of `Registry`
lives. The tables and records are in `schema.py`, the schema revisions in `revisions.py`,
the connection, transaction and migration machinery in `store.py`.
"""

from envs.registry.core import Registry
from envs.registry.errors import RegistryError
from envs.registry.revisions import (  # noqa: F401  (the public face re-exports them)
    MIGRATIONS_DIR,
    SCHEMA_REVISION,
    current_revision,
    head_revision,
    migration_config,
)
from envs.registry.schema import (  # noqa: F401
    JOB_FINAL,
    Attempt,
    AttemptRow,
    Base,
    EnvironmentRow,
    ImageRow,
    JobRecord,
    JobRow,
    RunRow,
    SWETaskRow,
    TerminalTaskRow,
    UTCDateTime,
)
from envs.registry.store import BUSY_TIMEOUT, LOCK_TIMEOUT, RETRY_SECONDS  # noqa: F401

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
