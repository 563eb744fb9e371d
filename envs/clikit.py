"""The one contract of every envfactory command: one line on failure, the right exit code.

`command` wraps each Typer command (the root's, repolaunch's, synth's, policy's, serve's);
`run_app` is the console entry point, for what fails before a command runs (an unknown
option, a setting that does not parse). Exit codes (envs/errors.py):

    0 ok   1 the machine failed (InfraError)   2 bad input (UserError, usage)
    70 an internal error (a bug: the traceback goes to a file)   130 interrupted

- Under `--json`, stdout carries one JSON object `{"error": {...}}` as well.
- `--debug` (ENVFACTORY_DEBUG=1) prints the traceback of any failure.
- Ctrl-C and SIGTERM unwind as KeyboardInterrupt: running work is killed by its context
  managers, sandboxes this process created are removed, and the command's resume hint (see
  `on_interrupt`) is printed.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import typer
from pydantic import ValidationError
from rich.console import Console

from envs.errors import (
    EXIT_BUG,
    EXIT_INPUT,
    EXIT_INTERRUPTED,
    EnvfactoryError,
    UserError,
)

F = TypeVar("F", bound=Callable[..., Any])


def _click_class(name: str) -> type[Exception]:
    # Typer vendors its own click (typer._click); its exception classes, found through the
    # public BadParameter rather than a private import.
    return next(c for c in typer.BadParameter.__mro__ if c.__name__ == name)


UsageError = _click_class("UsageError")
ClickException = _click_class("ClickException")

# Tables stay readable when piped or logged (rich falls back to 80 columns there). No
# `file:line` on log lines: it would name this module's logger, never the caller.
out = Console(width=None if sys.stdout.isatty() else 140, log_path=False)
err = Console(stderr=True, soft_wrap=True, log_path=False)

DEBUG_ENV = "ENVFACTORY_DEBUG"
_hint: list[str] = []  # what to tell the user on Ctrl-C (the innermost command's)


def debug() -> bool:
    return os.environ.get(DEBUG_ENV, "").lower() not in ("", "0", "false", "no")


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")
    sys.stdout.flush()


def logger(as_json: bool) -> Callable[[str], None]:
    """A command's progress log: stdout, or stderr under --json (stdout then carries only
    the JSON document)."""
    console = err if as_json else out

    def log(msg: str) -> None:
        console.log(msg, highlight=False)

    return log


def print_fields(title: str, fields: Any, *, limit: int = 2000) -> None:
    """One record as a two-column table (`show` commands): (field, value) pairs or a dict."""
    from rich.table import Table

    table = Table(title=title, show_header=False)
    table.add_column("field")
    table.add_column("value", overflow="fold")
    for key, value in (fields.items() if isinstance(fields, dict) else fields):
        table.add_row(str(key), str(value)[:limit])
    out.print(table)


def on_interrupt(hint: str) -> None:
    """What an interrupted run of this command should print, e.g. how to resume it."""
    _hint[:] = [hint]


def settings_error(exc: ValidationError) -> UserError:
    """A settings error as the option (and variable) the user set, and its value."""
    first = exc.errors()[0]
    name = str(first["loc"][0]) if first.get("loc") else "?"
    field = f"--{name.replace('_', '-')} / ENVFACTORY_{name.upper()}"
    message = first.get("msg", "invalid").removeprefix("Value error, ")
    return UserError(message[0].lower() + message[1:], field=field, value=first.get("input"))


def _as_user_error(exc: BaseException) -> EnvfactoryError | None:
    """The failures that are the user's input although their type is not ours."""
    if isinstance(exc, EnvfactoryError):
        return exc
    if isinstance(exc, ValidationError) and exc.title == "Settings":
        return settings_error(exc)
    if isinstance(exc, (FileNotFoundError, IsADirectoryError, NotADirectoryError)):
        name = exc.filename if exc.filename is not None else ""
        return UserError(f"{exc.strerror or type(exc).__name__}", where=str(name) or None)
    return None


def _crash_file(text: str) -> Path | None:
    try:
        from envs.config import get_settings

        base = get_settings().home / "logs"
    except Exception:
        base = Path("/tmp")
    with contextlib.suppress(OSError):
        base.mkdir(parents=True, exist_ok=True)
        path = base / f"crash-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.txt"
        path.write_text(text, encoding="utf-8")
        return path
    return None


def fail(exc: BaseException, *, as_json: bool = False) -> int:
    """Print one line for `exc` (and JSON under --json); the exit code it calls for."""
    known = _as_user_error(exc)
    if known is not None:
        code, kind, message = known.exit_code, known.kind, str(known)
        detail = known.to_json() if isinstance(known, UserError) else {
            "kind": kind, "message": message}
    else:  # a bug: say so, keep the traceback, never dress it up as bad input
        code, kind = EXIT_BUG, "internal"
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        where = _crash_file(tb)
        message = (f"internal error: {type(exc).__name__}: {str(exc).strip() or '-'}"
                   f" (a bug; traceback in {where or 'the --debug output'})")
        detail = {"kind": kind, "message": message}
    line = message.strip().splitlines()[0] if message.strip() else type(exc).__name__
    if debug():
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    err.print(f"[red]error:[/red] {line}", highlight=False, markup=True, soft_wrap=True)
    if as_json:
        emit_json({"ok": False, "exit_code": code, "error": {**detail, "message": line}})
    return code


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _reap_own_sandboxes() -> None:
    """A signal can land between the engine creating a container and a sandbox holding it,
    where no context manager can see it: on the way out, remove whatever this process owns."""
    sandbox = sys.modules.get("envs.sandbox")
    if sandbox is None:
        return  # this command never touched the engine
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second TERM must not cut the cleanup
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(Exception):
        sandbox.gc(mine=True)


def interrupted(*, as_json: bool = False) -> int:
    _reap_own_sandboxes()
    hint = _hint[0] if _hint else ""
    err.print(f"interrupted{'; ' + hint if hint else ''}", highlight=False, soft_wrap=True)
    if as_json:
        emit_json({"ok": False, "exit_code": EXIT_INTERRUPTED,
                   "error": {"kind": "interrupted", "message": hint or "interrupted"}})
    return EXIT_INTERRUPTED


def command(fn: F) -> F:
    """Every command's wrapper: failures as one line and an exit code (module docstring)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is threading.main_thread():
            # SIGTERM (a `timeout`, a scheduler) unwinds like Ctrl-C, so sandboxes are removed.
            signal.signal(signal.SIGTERM, _interrupt)
        as_json = bool(kwargs.get("as_json"))
        try:
            return fn(*args, **kwargs)
        except (typer.Exit, typer.Abort, ClickException):
            raise
        except KeyboardInterrupt:
            raise typer.Exit(interrupted(as_json=as_json)) from None
        except Exception as exc:  # every failure gets its line and code
            raise typer.Exit(fail(exc, as_json=as_json)) from None

    return wrapper  # type: ignore[return-value]


def run_app(app: typer.Typer, argv: list[str] | None = None) -> None:
    """The console entry point: usage errors and the settings as one line, exit 2."""
    args = sys.argv[1:] if argv is None else argv
    as_json = "--json" in args
    if "--debug" in args:
        os.environ[DEBUG_ENV] = "1"
    try:
        code = app(args=args, standalone_mode=False, prog_name="envfactory")
    except ClickException as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # `envfactory images`: its help
            out.print(exc.ctx.get_help(), highlight=False, markup=False)  # type: ignore[attr-defined]
            sys.exit(0)
        command = exc.ctx.command_path if getattr(exc, "ctx", None) else "envfactory"
        message = exc.format_message().strip().splitlines()
        text = " ".join(m.strip() for m in message if m.strip())
        err.print(f"[red]error:[/red] {text} (see `{command} --help`)", highlight=False,
                  soft_wrap=True)
        if as_json:
            emit_json({"ok": False, "exit_code": EXIT_INPUT,
                       "error": {"kind": "usage", "message": text}})
        code = EXIT_INPUT
    except typer.Abort:
        code = interrupted(as_json=as_json)
    except KeyboardInterrupt:
        code = interrupted(as_json=as_json)
    except Exception as exc:  # a failure outside any command (the callback)
        code = fail(exc, as_json=as_json)
    sys.exit(code if isinstance(code, int) else 0)
