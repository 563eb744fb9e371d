"""Files that survive an interrupted run and name bad input: every flow writes through here.

- `atomic_write(path, data)`: a whole file, through a temporary file in the same directory
  and `os.replace`, so a reader (or a crash) sees the old file or the new one, never half.
- `read_jsonl(path)`: input rows (a JSONL file, or one JSON array), each with its line, and
  `row_error(where, exc)`: a row that does not validate, as one UserError naming
  `file:line`, the field and the value.
- `StateFile`: the one state file of a resumable flow (synth, import, eval, the GitHub
  miner). A JSONL of records keyed by a hash of each item's inputs (`input_key`, the patch
  included), so a changed input is work to do again, never an old verdict. Opening it
  repairs a torn last line (the interrupted run's) by rewriting the file atomically; a
  record whose outcome was an infrastructure failure is not "done", so a resume retries it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from envs.errors import UserError


def atomic_write(path: str | os.PathLike[str], data: str | bytes, *,
                 encoding: str = "utf-8", mode: int | None = None) -> Path:
    """Write the whole file or nothing (a temporary sibling, fsync, `os.replace`)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode(encoding, errors="replace") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        elif target.exists():
            os.chmod(tmp, target.stat().st_mode & 0o7777)
        else:
            os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return target


_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


def safe_name(text: str) -> str:
    """A string as one file name (run ids, instance ids, model names)."""
    return _UNSAFE.sub("_", text).strip("_") or "_"


@contextlib.contextmanager
def locked(path: str | os.PathLike[str]) -> Iterator[None]:
    """One holder at a time across processes (pytest workers, two CLI runs): an exclusive
    flock on `path`, made (with its folder) when missing."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with open(p, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


# --------------------------------------------------------------------------- input rows


def read_jsonl(path: str | os.PathLike[str]) -> list[tuple[str, dict[str, Any]]]:
    """The rows of a JSONL file (or a JSON array), each as (`file:line`, row). Bad JSON, a
    row that is not an object and a missing file are UserErrors naming where."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise UserError("no such file", where=str(p)) from None
    except IsADirectoryError:
        raise UserError("is a directory, not a JSONL file", where=str(p)) from None
    except OSError as exc:
        raise UserError(exc.strerror or str(exc), where=str(p)) from None
    text = raw.decode("utf-8", errors="replace")
    stripped = text.lstrip()
    if stripped.startswith("["):  # one JSON array is accepted too (SWE-bench accepts both)
        try:
            rows = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise UserError(f"not valid JSON: {exc.msg}", where=f"{p}:{exc.lineno}") from None
        out = []
        for i, row in enumerate(rows, 1):
            if not isinstance(row, dict):
                raise UserError(f"item {i} is not a JSON object", where=str(p))
            out.append((f"{p}[{i}]", row))
        return out
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"not valid JSON: {exc.msg}", where=f"{p}:{n}") from None
        if not isinstance(row, dict):
            raise UserError(f"expected a JSON object, got {type(row).__name__}",
                            where=f"{p}:{n}")
        out.append((f"{p}:{n}", row))
    return out


def row_error(where: str, exc: ValidationError | ValueError | TypeError,
              row: dict[str, Any] | None = None) -> UserError:
    """A row that does not validate, as one line: where, the field, its value, why."""
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        loc = ".".join(str(x) for x in first.get("loc", ()))
        message = str(first.get("msg", "invalid")).removeprefix("Value error, ")
        value = first.get("input")
        if row is not None and loc in row:
            value = row[loc]
        return UserError(message, where=where, field=loc or None, value=value)
    return UserError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__,
                     where=where)


# --------------------------------------------------------------------------- state files


def input_key(*parts: Any) -> str:
    """A stable hash of an item's inputs (JSON-able parts, e.g. id, patch, options)."""
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class StateFile:
    """Records of a resumable flow, one JSON object a line, each with a "key".

    `done(key)` is the record of a finished item, or None when it must run (never run, or
    its last record says `retry(record)`: an infrastructure failure). `put(record)`
    appends one line and fsyncs; the latest record of a key wins. Thread-safe."""

    SETTINGS = "__settings__"

    def __init__(self, path: str | os.PathLike[str], *,
                 retry: Callable[[dict[str, Any]], bool] = lambda r: False,
                 settings: dict[str, Any] | None = None, key_field: str = "key") -> None:
        """``settings``: what the whole run depends on; a file written under other settings
        is refused (a UserError), never mixed in. ``key_field``: the field that holds each
        record's key (a state file whose records carry their own id, e.g. instance_id)."""
        self.path = Path(path)
        self._retry = retry
        self._key = key_field
        self._lock = threading.Lock()
        self.records: dict[str, dict[str, Any]] = {}
        self.repaired = 0  # torn or unreadable lines dropped on open
        self._load()
        if settings is not None:
            had = self.records.pop(self.SETTINGS, None)
            wanted = json.loads(json.dumps(settings, default=str))
            if had is None:
                self.put(self.SETTINGS, {"settings": wanted})
                self.records.pop(self.SETTINGS, None)
            elif had.get("settings") != wanted:
                raise UserError("written by a run with other settings; delete it or pass "
                                "another state path", where=str(self.path))

    def _load(self) -> None:
        if not self.path.is_file():
            return
        raw = self.path.read_bytes()
        good: list[bytes] = []
        for line in raw.splitlines():
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                self.repaired += 1
                continue
            if not isinstance(record, dict) or self._key not in record:
                self.repaired += 1
                continue
            good.append(line)
            self.records[str(record[self._key])] = record
        if self.repaired or (raw and not raw.endswith(b"\n")):
            # The next append must not join a torn line: rewrite what was whole, atomically.
            atomic_write(self.path, b"".join(g + b"\n" for g in good))

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(list(self.records.values()))

    def get(self, key: str) -> dict[str, Any] | None:
        return self.records.get(key)

    def done(self, key: str) -> dict[str, Any] | None:
        record = self.records.get(key)
        if record is None or self._retry(record):
            return None
        return record

    def put(self, key: str, record: dict[str, Any]) -> None:
        line = json.dumps({**record, self._key: key}, default=str, separators=(",", ":"))
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("ab") as fh:
                fh.write(line.encode() + b"\n")
                fh.flush()
                os.fsync(fh.fileno())
            self.records[key] = json.loads(line)
