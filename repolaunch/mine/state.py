"""The miners' resumable progress (`mine(..., state=)`, `mine_github(..., state=)`): one record
per processed commit or pull request (a candidate or a rejection), in order, in the one state
file every resumable flow keeps (envs/files.StateFile: a torn last line repaired, never a
file truncated in place; a file of other settings refused)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from envs.files import StateFile

__all__ = ["MineState"]


class MineState:
    """The records of an earlier run (`records`, in order), and `append` for new ones."""

    def __init__(self, path: Path, settings: dict[str, Any]) -> None:
        self._file = StateFile(path, settings=settings)
        self.path = self._file.path
        self.records: list[dict[str, Any]] = [
            {k: v for k, v in r.items() if k != "key"} for r in self._file]
        self._next = len(self.records)

    def append(self, row: dict[str, Any]) -> None:
        # The key is the record's place: the miners replay the records in order.
        self._file.put(f"{self._next:09d}", row)
        self._next += 1

    def close(self) -> None:
        """Nothing is held open: every record is written and synced as it comes."""
