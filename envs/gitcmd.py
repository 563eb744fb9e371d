"""git on the host, as a subprocess: the one helper every module that shells out to git uses.

    head = git("rev-parse", "HEAD", cwd=repo).strip()
    data = git("-C", str(repo), "show", "HEAD:setup.py", binary=True, default=b"")
    git("clone", "-q", "--bare", url, str(dest), prompt=False, timeout=900)

A command that exits non-zero or runs out of time raises `GitError`, whose message is one
line: ``git <command> failed: <git's last line>`` or ``git <command> timed out after <n>s``
(`<command>` is the subcommand, after any global options such as ``-C dir``). Callers turn
it into their own error type, or pass ``default=`` to get that value back from a failure
instead (a timeout still raises). A git that cannot be started at all, or a ``cwd`` that
does not exist, is the `OSError` subprocess raises.

The environment is this process's unless ``env`` gives another (the whole environment, as
for subprocess); ``prompt=False`` adds ``GIT_TERMINAL_PROMPT=0``, so a clone that needs
credentials fails instead of waiting on a terminal. git inside a container is not run from
here: `envs.sandbox.GIT` is that command line.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal, overload

from envs.errors import InfraError

__all__ = ["GitError", "git"]

# global options that take the next argument as their value (`git -C dir -c k=v status`)
_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace",
                     "--exec-path", "--config-env"})


class GitError(InfraError):
    """A git command failed or timed out; the message is one line.

    `command` is git's subcommand, `detail` git's last line of output (empty for a timeout),
    `returncode` None for a timeout, `stderr` everything git wrote there."""

    def __init__(self, message: str, *, command: str, detail: str = "",
                 returncode: int | None = None, stderr: str = "",
                 timed_out: bool = False) -> None:
        super().__init__(message)
        self.command, self.detail, self.returncode = command, detail, returncode
        self.stderr, self.timed_out = stderr, timed_out


def _subcommand(args: tuple[str, ...]) -> str:
    """The first word that is not a global option (or an option's value): what git runs."""
    it = iter(args)
    for arg in it:
        if arg in _VALUED:
            next(it, None)
        elif not arg.startswith("-"):
            return arg
    return args[0] if args else "?"


def _last_line(*texts: str) -> str:
    for text in texts:
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        if lines:
            return lines[-1][:200]
    return ""


@overload
def git(*args: str, cwd: Path | str | None = None, input: str | None = None,
        env: Mapping[str, str] | None = None, prompt: bool = True,
        timeout: float | None = None, binary: Literal[False] = False,
        default: str | None = None) -> str: ...


@overload
def git(*args: str, cwd: Path | str | None = None, input: bytes | None = None,
        env: Mapping[str, str] | None = None, prompt: bool = True,
        timeout: float | None = None, binary: Literal[True],
        default: bytes | None = None) -> bytes: ...


def git(*args: str, cwd: Path | str | None = None, input: str | bytes | None = None,
        env: Mapping[str, str] | None = None, prompt: bool = True,
        timeout: float | None = None, binary: bool = False,
        default: str | bytes | None = None) -> str | bytes:
    """Run ``git *args`` and return its standard output (text, or bytes with ``binary``).

    ``default``: returned instead of raising when git exits non-zero. ``timeout`` in seconds
    (None: no limit); the process is killed when it runs out."""
    full_env = dict(os.environ if env is None else env)
    if not prompt:
        full_env["GIT_TERMINAL_PROMPT"] = "0"  # fail, never prompt for credentials
    command = _subcommand(args)
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True,
                              text=not binary, env=full_env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise GitError(f"git {command} timed out after {timeout:.0f}s", command=command,
                       timed_out=True) from None
    if proc.returncode == 0:
        return proc.stdout
    if default is not None:
        return default
    out, err = proc.stdout, proc.stderr
    if binary:
        out, err = out.decode(errors="replace"), err.decode(errors="replace")
    detail = _last_line(err, out) or f"exit status {proc.returncode}"
    raise GitError(f"git {command} failed: {detail}", command=command, detail=detail,
                   returncode=proc.returncode, stderr=err)


def commit_date(repo: Path | str) -> str | None:
    """The checked-out commit's committer date in UTC (`2024-05-01T12:00:00Z`), or None when
    `repo` is not a git checkout: what the time machines resolve dependencies as of."""
    try:
        out = str(git("-C", str(repo), "log", "-1", "--format=%cI", timeout=30)).strip()
        when = datetime.fromisoformat(out)
    except (OSError, GitError, ValueError):
        return None
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
