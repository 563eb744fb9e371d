"""Where a launch's source comes from: a local repository or a clone of a URL, checked out at
a commit in a scratch copy that keeps the whole history (so later checkouts work).

    src = local_source("https://host/owner/name.git", log=print)   # cloned under home/repos
    sha = resolve_commit(src, "v1.2")
    root = checkout_copy(src, sha, Path(tmp) / "repo")
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

from envs.config import get_settings
from envs.errors import UserError
from repolaunch.mirror import stand_in_missing_blobs

Log = Callable[[str], None]
_SAFE = re.compile(r"[^a-z0-9._-]+")


class LaunchError(UserError, RuntimeError):
    """The repository could not be built into an environment; one line."""


def _git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        lines = (proc.stderr or proc.stdout).strip().splitlines() or ["?"]
        raise LaunchError(f"git {' '.join(args[:2])} failed: {lines[-1][:200]}")
    return proc.stdout


def repo_name(source: str | Path) -> str:
    text = str(source).rstrip("/")
    if text.endswith(".git"):
        text = text[:-4]
    parts = [p for p in re.split(r"[/:]", text) if p]
    name = "__".join(parts[-2:]) if len(parts) >= 2 and "://" in text else parts[-1]
    return _SAFE.sub("-", name.lower()).strip("-") or "repo"


def local_source(source: str | Path, *, log: Log) -> Path:
    """A local git repository for the source: the path itself, or a clone of the URL."""
    path = Path(str(source)).expanduser()
    if path.exists():
        if not (path / ".git").exists() and not (path / "HEAD").exists():
            raise LaunchError(f"{path} is not a git repository")
        return path.resolve()
    if not re.match(r"^(https?|git|ssh)://|^git@", str(source)):
        raise LaunchError(f"{source}: no such path, and not a repository URL")
    dest = get_settings().home / "repos" / repo_name(source)
    if not dest.exists():
        log(f"cloning {source} ...")
        dest.parent.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(["git", "clone", "-q", str(source), str(dest)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            lines = proc.stderr.strip().splitlines() or ["?"]
            raise LaunchError(f"clone of {source} failed: {lines[-1][:200]}")
    return dest


def checkout_copy(src: Path, commit: str, dest: Path, *, log: Log = lambda m: None) -> Path:
    """A full clone of src (all history, so later checkouts work) checked out at commit.

    A source whose history lacks some blobs (a size-capped or partial mirror) still checks
    out: each missing blob is stood in for by an empty file (`stand_in_missing_blobs`)."""
    proc = subprocess.run(["git", "clone", "-q", "-n", "--no-hardlinks", str(src), str(dest)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise LaunchError(f"cannot clone {src}: {proc.stderr.strip()[:200]}")
    checkout = ("-c", "advice.detachedHead=false", "checkout", "-qf", commit)
    try:
        _git(dest, *checkout)
    except LaunchError as exc:
        if not re.search(r"invalid object|unable to read|missing blob|bad object", str(exc)):
            raise
        n = stand_in_missing_blobs(dest)
        if not n:
            raise
        log(f"the history of {src} lacks {n} blob(s) (a partial mirror): they check out as "
            "empty files")
        _git(dest, *checkout)
    return dest


def resolve_commit(repo: Path, commit: str | None) -> str:
    try:
        return _git(repo, "rev-parse", "--verify", f"{commit or 'HEAD'}^{{commit}}").strip()
    except LaunchError:
        raise LaunchError(f"commit {commit or 'HEAD'!r} not found in {repo}") from None
