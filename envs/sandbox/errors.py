"""What a sandbox operation raises, and how engine and command failures become one line."""

from __future__ import annotations

import re

from docker.errors import APIError

from envs.errors import InfraError


class SandboxError(InfraError):
    """A sandbox operation failed; the message says why in one line."""


class SandboxDied(SandboxError):
    """The container is gone or stopped (killed from outside, engine restarted, OOM of init)."""


class DiffError(SandboxError):
    """git could not produce the work tree's diff, or it is over the size asked for (the
    work tree's doing, not the engine's)."""


def short(exc: BaseException) -> str:
    """An exception (an engine error above all) as one line of at most 300 characters."""
    text = getattr(exc, "explanation", None) or str(exc)
    lines = str(text).strip().splitlines()
    return (lines[0] if lines else type(exc).__name__)[:300]


def is_not_running(exc: APIError) -> bool:
    return exc.status_code == 409 or "is not running" in short(exc) or "is paused" in short(exc)


_KEY_ERRORS = re.compile(r"patch failed|does not apply|does not exist|already exists|"
                         r"corrupt patch|No such file|No valid patches|not a git repository|"
                         r"unknown base|cannot|fatal:")


def first_error(text: str) -> str:
    """The most telling line of a failed command: a known error, else any error line."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for pick in (lambda ln: _KEY_ERRORS.search(ln),
                 lambda ln: ln.startswith("error:") or "error" in ln.lower()):
        for ln in lines:
            if pick(ln):
                return ln[:300]
    return (lines[0] if lines else "no output")[:300]
