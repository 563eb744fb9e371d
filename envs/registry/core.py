"""`Registry`, put together from one part per noun over the shared `Store` (connection,
transactions, migration): `CatalogStore` (images, environments, SWE and terminal tasks,
`catalog.py`), `RunStore` (runs, attempts, `runs.py`), `JobStore` (the job queue,
`jobs.py`)."""

from __future__ import annotations

from sqlalchemy import func, select

from envs.registry.catalog import CatalogStore
from envs.registry.jobs import JobStore
from envs.registry.runs import RunStore
from envs.registry.schema import TABLES

__all__ = ["Registry"]


class Registry(CatalogStore, RunStore, JobStore):
    """The registry of images, environments, SWE tasks, terminal tasks, runs and attempts.

    Thread-safe (one pooled connection per operation) and safe across processes. `put_*`
    is an upsert; `get_*` returns the pydantic model or None; `list_*` orders by key.
    """

    def count(self, table_name: str) -> int:
        """Rows in one of the registry's tables (images, environments, swe_tasks,
        terminal_tasks, runs, attempts)."""
        table = TABLES.get(table_name)
        if table is None:
            raise ValueError(f"no registry table {table_name!r} (one of {', '.join(TABLES)})")
        stmt = select(func.count()).select_from(table)
        return self._read(lambda c: int(c.execute(stmt).scalar_one()))
