"""The kinds of failure a user can meet, and the exit code each one gets.

Every error envfactory raises on purpose derives from one of two classes, so the one CLI
wrapper (envs/clikit.py) needs no list of exception types, and a real bug (anything else)
is never mistaken for bad input:

- `UserError` (a ValueError): the input is wrong (a file, a row of it, an option, a name).
  Exit 2. Its message names the field, the value and, for input read from a file,
  `file:line`, so the user can fix it without a traceback.
- `InfraError` (a RuntimeError): the machine failed the command (no engine, an image that
  did not build, a sandbox that died, an unreachable registry). Exit 1.

Both stay subclasses of the built-in types they replaced, so code that catches ValueError or
RuntimeError keeps working.
"""

from __future__ import annotations

from typing import Any

EXIT_FAILED = 1
EXIT_INPUT = 2
EXIT_BUG = 70  # EX_SOFTWARE: an internal error, a traceback is kept
EXIT_INTERRUPTED = 130

_UNSET: Any = object()


class EnvfactoryError(Exception):
    """Base of the failures envfactory raises on purpose; `exit_code` says which kind."""

    exit_code = EXIT_FAILED
    kind = "failed"


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class UserError(EnvfactoryError, ValueError):
    """Bad input. `where` is `file:line` (or a file), `field` the option or key, `value`
    what was given; the message says what was expected."""

    exit_code = EXIT_INPUT
    kind = "bad_input"

    def __init__(self, message: str, *, where: str | None = None, field: str | None = None,
                 value: Any = _UNSET) -> None:
        self.message, self.where, self.field = message, where, field
        self.value = None if value is _UNSET else value
        prefix = f"{where}: " if where else ""
        if field is not None:
            prefix += f"{field}: "
        if value is not _UNSET:
            message = f"{_short(value)}: {message}"
        super().__init__(prefix + message)

    def __str__(self) -> str:  # not KeyError's repr, for the lookups below
        return str(self.args[0]) if self.args else ""

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": str(self), "where": self.where,
                "field": self.field, "value": self.value}


class InfraError(EnvfactoryError, RuntimeError):
    """The machine failed the command, not the input: an engine, an image, a sandbox, a
    database or a network peer."""

    exit_code = EXIT_FAILED
    kind = "infrastructure"


class UnknownName(UserError, KeyError):
    """A failed lookup by name (also a KeyError, as lookups raised before)."""


def unknown(what: str, name: Any, known: Any, *, field: str | None = None) -> UnknownName:
    """The one wording of a failed lookup: the name asked for and every name there is."""
    names = [str(k) for k in known]
    shown = ", ".join(names[:40]) + (f", ... ({len(names)} in all)" if len(names) > 40 else "")
    return UnknownName(f"unknown {what} {name!r}; known: {shown or '(none)'}", field=field)
