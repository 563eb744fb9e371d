"""An issues export (JSONL, one issue a line, or a JSON array): `load_issues` ->
`IssueRecord`s, whose problem statement is the title and body and whose hints are the
comments made before a given time."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["IssueComment", "IssueRecord", "load_issues"]


def _parse_date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


class IssueComment(BaseModel):
    model_config = ConfigDict(frozen=True)

    body: str = ""
    created_at: str | None = None


class IssueRecord(BaseModel):
    """One issue of an issues export: ``{"number", "title", "body", "comments", "created_at"}``.

    Comments may be objects ``{"body", "created_at"}`` or plain strings (no date: such a
    comment can never be shown to be earlier than the fix, so it is not a hint).
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    number: int
    title: str = ""
    body: str | None = ""
    comments: list[IssueComment] = Field(default_factory=list)
    created_at: str | None = None

    @field_validator("comments", mode="before")
    @classmethod
    def _comments(cls, value: Any) -> Any:
        if value is None:
            return []
        return [{"body": c} if isinstance(c, str) else c for c in value]

    @property
    def problem_statement(self) -> str:
        return f"{self.title}\n{self.body or ''}"

    def hints_before(self, when: datetime) -> list[str]:
        out = []
        for c in self.comments:
            at = _parse_date(c.created_at)
            if at is not None and at < when:
                out.append(c.body)
        return out


def load_issues(path: Path) -> dict[int, IssueRecord]:
    """Read an issues export: JSONL (one issue a line) or a JSON array."""
    text = Path(path).read_text(encoding="utf-8")
    rows: list[Any]
    if text.lstrip().startswith("["):
        rows = json.loads(text)
    else:
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    out: dict[int, IssueRecord] = {}
    for row in rows:
        rec = IssueRecord.model_validate(row)
        out[rec.number] = rec
    return out
