"""An instance's repository, for the import: found under ``repos`` or in the clone cache, or
cloned once (`locate_repo`); its base commit checked (`check_commit`); and what a partial
mirror lacks at that commit, recovered where a release carries it (`holes_at`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from envs.gitcmd import GitError, git
from repolaunch.importer_report import InstanceError
from repolaunch.sources import find_repo

__all__ = ["check_commit", "holes_at", "locate_repo"]

Log = Callable[[str], None]


def locate_repo(full_name: str, *, repos: Path | None, cache: Path, clone_base: str,
                log: Log) -> Path:
    """A local clone or mirror of ``owner/name``: under ``repos``, in the cache, or cloned."""
    if "/" not in full_name:
        raise InstanceError(f"repo {full_name!r} is not owner/name", "invalid_instance")
    if repos is not None and (found := find_repo(Path(repos), full_name)) is not None:
        return found
    if (found := find_repo(cache, full_name)) is not None:
        return found
    url = f"{clone_base.rstrip('/')}/{full_name}.git"
    dest = cache / f"{full_name.replace('/', '__')}.git"
    where = f"not under {repos}; " if repos is not None else ""
    log(f"cloning {url} ...")
    cache.mkdir(parents=True, exist_ok=True)
    try:
        git("clone", "-q", "--bare", url, str(dest), prompt=False, timeout=900)
    except GitError as exc:
        raise InstanceError(f"{where}clone of {url} failed: {str(exc).split(': ', 1)[-1]}",
                            "repo_unavailable") from None
    return dest


_REPAIRED: dict[str, dict[str, set[str]]] = {}  # repository -> blobs still missing


def holes_at(repo: Path, commit: str, log: Log) -> list[str]:
    """Recover what a partial mirror lacks (once per repository and process), then name the
    files of the commit that are still missing."""
    from repolaunch import mirror

    key = str(Path(repo).resolve())
    if key not in _REPAIRED:
        holes = mirror.missing_blobs(Path(repo))
        if holes:
            log(f"{repo}: the mirror lacks {len(holes)} blob(s); looking for them in the "
                "project's releases")
            got = mirror.recover_from_pypi(Path(repo), holes, log=log)
            holes = {s: p for s, p in holes.items() if s not in got}
        _REPAIRED[key] = holes
    holes = _REPAIRED[key]
    if not holes:
        return []
    tree = git("-C", str(repo), "ls-tree", "-r", commit, default="")
    return sorted(line.split("\t", 1)[1] for line in tree.splitlines()
                  if "\t" in line and line.split()[2] in holes)


def check_commit(repo: Path, sha: str) -> None:
    try:
        git("cat-file", "-e", f"{sha}^{{commit}}", cwd=repo, prompt=False, timeout=60)
    except GitError:
        raise InstanceError(f"base commit {sha[:12]} is not in {repo}",
                            "commit_unavailable") from None
