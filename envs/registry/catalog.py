"""What the factory has made and can hand out: images, environments, SWE tasks and terminal
tasks. `put_*` is an upsert (the tasks' plural forms land all in one transaction, or none),
`get_*` the pydantic model or None, `list_*` ordered by key.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.engine import Connection

from envs.models import EnvSpec, ImageRecord, SWETask, TerminalTask
from envs.registry.schema import (
    EnvironmentRow,
    ImageRow,
    SWETaskRow,
    TerminalTaskRow,
    utc_model,
    value,
)
from envs.registry.store import Store, upsert

__all__ = ["CatalogStore"]


class CatalogStore(Store):
    """Images, environments, SWE tasks and terminal tasks."""

    # -- images

    def put_image(self, image: ImageRecord) -> None:
        values = {
            "tag": image.tag,
            "kind": image.kind,
            "language": value(image.language),
            "parent": image.parent,
            "content_hash": image.content_hash,
            "size_bytes": image.size_bytes,
            "versions": dict(image.versions),
            "created_at": image.created_at,
        }
        self._write(lambda c: upsert(c, ImageRow.__table__, values))

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
            "language": value(spec.language),
            "image": spec.image,
            "fingerprint": spec.fingerprint,
            "spec": spec.model_dump(mode="json"),
            "created_at": now,
            "updated_at": now,
        }
        # created_at is the first registration; a replace keeps it.
        self._write(lambda c: upsert(c, EnvironmentRow.__table__, values, keep=("created_at",)))

    def get_env(self, name: str) -> EnvSpec | None:
        return self._get(EnvSpec, EnvironmentRow.spec, EnvironmentRow.name == name)

    def list_envs(self, language: str | None = None) -> list[EnvSpec]:
        where = [] if language is None else [EnvironmentRow.language == value(language)]
        return self._list(EnvSpec, EnvironmentRow.spec, EnvironmentRow.name, where)

    # -- SWE tasks

    def put_swe_task(self, task: SWETask) -> None:
        self.put_swe_tasks([task])

    def put_swe_tasks(self, tasks: list[SWETask]) -> None:
        """Upsert every task in one transaction: all of them land, or none (an import)."""
        rows = [{
            "instance_id": task.instance_id,
            "repo": task.repo,
            "language": value(task.language),
            "base_commit": task.base_commit,
            "kind": value(task.kind),
            "created_at": task.created_at,
            "env_name": task.env_spec.name if task.env_spec else None,
            "data": task.model_dump(mode="json"),
        } for task in tasks]

        def tx(c: Connection) -> None:
            for values in rows:
                upsert(c, SWETaskRow.__table__, values)

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
            where.append(SWETaskRow.language == value(language))
        if kind is not None:
            where.append(SWETaskRow.kind == value(kind))
        return self._list(SWETask, SWETaskRow.data, SWETaskRow.instance_id, where)

    # -- terminal tasks

    def put_terminal_task(self, task: TerminalTask) -> None:
        self.put_terminal_tasks([task])

    def put_terminal_tasks(self, tasks: list[TerminalTask]) -> None:
        """Upsert every terminal task in one transaction."""
        rows = []
        for task in tasks:
            task = utc_model(task)
            rows.append({
                "task_id": task.task_id,
                "family": task.family,
                "category": task.category,
                "difficulty": value(task.difficulty),
                "data": task.model_dump(mode="json"),
            })

        def tx(c: Connection) -> None:
            for values in rows:
                upsert(c, TerminalTaskRow.__table__, values)

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
