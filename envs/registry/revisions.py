"""Which schema revision the code and a database are at: the Alembic scripts in
`envs/migrations/` (`migration_config`, built in code, no alembic.ini), their head
(`head_revision`), and the revision a database records (`current_revision`, one cheap query
that needs no Alembic import).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import inspect
from sqlalchemy.engine import Connection

from envs.registry.errors import RegistryError

if TYPE_CHECKING:
    from alembic.config import Config

__all__ = ["MIGRATIONS_DIR", "SCHEMA_REVISION", "current_revision", "head_revision",
           "migration_config"]

MIGRATIONS_DIR = Path(__file__).parent.with_name("migrations")  # envs/migrations
# The head of MIGRATIONS_DIR, spelled out so that opening a migrated database needs no Alembic
# import (~100 ms); bump it with every new revision (a test checks the two agree).
SCHEMA_REVISION = "0002"


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


def current_revision(conn: Connection) -> str | None:
    """The revision in alembic_version, read directly: the check on every open stays cheap
    and needs no Alembic import."""
    if not inspect(conn).has_table("alembic_version"):
        return None
    versions = conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalars().all()
    return versions[0] if len(versions) == 1 else None
