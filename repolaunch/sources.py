"""Where a launch's source comes from: a local repository or a clone of a URL, checked out at
a commit in a scratch copy that keeps the whole history (so later checkouts work).

    src = local_source("https://host/owner/name.git", log=print)   # cloned under home/repos
    sha = resolve_commit(src, "v1.2")
    root = checkout_copy(src, sha, Path(tmp) / "repo")
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from envs.config import get_settings
from envs.errors import UserError
from envs.gitcmd import GitError, git
from repolaunch.mirror import stand_in_missing_blobs

Log = Callable[[str], None]
_SAFE = re.compile(r"[^a-z0-9._-]+")


class LaunchError(UserError, RuntimeError):
    """The repository could not be built into an environment; one line."""


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
        try:
            git("clone", "-q", str(source), str(dest))
        except GitError as exc:
            raise LaunchError(f"clone of {source} failed: {exc.detail}") from None
    return dest


def checkout_copy(src: Path, commit: str, dest: Path, *, log: Log = lambda m: None) -> Path:
    """A full clone of src (all history, so later checkouts work) checked out at commit.

    A source whose history lacks some blobs (a size-capped or partial mirror) still checks
    out: each missing blob is stood in for by an empty file (`stand_in_missing_blobs`)."""
    try:
        git("clone", "-q", "-n", "--no-hardlinks", str(src), str(dest))
    except GitError as exc:
        raise LaunchError(f"cannot clone {src}: {exc.detail}") from None
    try:
        _checkout(dest, commit)
    except LaunchError as exc:
        if not re.search(r"invalid object|unable to read|missing blob|bad object", str(exc)):
            raise
        n = stand_in_missing_blobs(dest)
        if not n:
            raise
        log(f"the history of {src} lacks {n} blob(s) (a partial mirror): they check out as "
            "empty files")
        _checkout(dest, commit)
    return dest


def _checkout(repo: Path, commit: str) -> None:
    try:
        git("-c", "advice.detachedHead=false", "checkout", "-qf", commit, cwd=repo)
    except GitError as exc:
        raise LaunchError(str(exc)) from None


def resolve_commit(repo: Path, commit: str | None) -> str:
    try:
        return git("rev-parse", "--verify", f"{commit or 'HEAD'}^{{commit}}", cwd=repo).strip()
    except GitError:
        raise LaunchError(f"commit {commit or 'HEAD'!r} not found in {repo}") from None


def find_repo(root: Path, full_name: str) -> Path | None:
    """A clone or bare mirror of ``owner/name`` under root: ``owner/name`` or ``owner__name``,
    each with or without ``.git`` (a work tree's ``.git`` directory counts as the clone)."""
    owner, _, name = full_name.partition("/")
    for rel in (f"{owner}/{name}", f"{owner}/{name}.git", f"{owner}__{name}",
                f"{owner}__{name}.git"):
        for cand in (root / rel, (root / rel).with_name((root / rel).name.lower())):
            if (cand / ".git").exists() or (cand / "HEAD").is_file():
                return cand
    return None
