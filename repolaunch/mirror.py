"""Mirrors with holes: a repository whose history names blobs its object store lacks (a
size-capped or partial mirror) — find them, recover them from the project's published
distributions, and let checkouts work for what cannot be recovered.

    holes = missing_blobs(repo)              # {sha: {paths}}
    got = recover_from_pypi(repo, holes, log=print)
    stand_in_missing_blobs(repo)             # empty files for the rest (checkout_copy does)

Recovery is by content: a git blob id is the SHA-1 of its bytes, so a file from a release
archive whose blob id equals a missing one *is* that blob, and it goes back into the object
store (`git hash-object -w`) with nothing to trust but the hash. The releases tried are the
ones published after each missing blob first appeared (the first that could carry it), the
project's name read from its own metadata; at most ``max_downloads`` archives.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

from envs.gitcmd import git

Log = Callable[[str], None]
PYPI = "https://pypi.org/pypi"


def _out(repo: Path, *args: str, input: bytes | None = None) -> bytes:
    """git's output in repo, or nothing when git fails (a repository without what is asked)."""
    return git("-C", str(repo), *args, input=input, binary=True, default=b"")


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _missing_ids(repo: Path) -> set[str]:
    return {ln[1:].split()[0] for ln in
            _out(repo, "rev-list", "--objects", "--all", "--missing=print")
            .decode(errors="replace").splitlines() if ln.startswith("?")}


def missing_blobs(repo: Path) -> dict[str, set[str]]:
    """Blob ids the history names but the object store lacks, with the paths they had."""
    missing = _missing_ids(repo)
    if not missing:
        return {}
    out: dict[str, set[str]] = {sha: set() for sha in missing}
    raw = _out(repo, "log", "--all", "--format=", "--raw", "--no-abbrev", "--no-renames")
    for line in raw.decode(errors="replace").splitlines():
        if not line.startswith(":") or "\t" not in line:
            continue
        meta, path = line.split("\t", 1)
        for sha in meta.split()[2:4]:
            if sha in out:
                out[sha].add(path)
    return out


def _lifetimes(repo: Path, shas: set[str]) -> dict[str, tuple[str, str]]:
    """(first added, last replaced or deleted — "~" when never) committer dates per blob."""
    out: dict[str, list[str]] = {}
    raw = _out(repo, "log", "--all", "--reverse", "--format=@%cI", "--raw", "--no-abbrev",
               "--no-renames").decode(errors="replace")
    date = ""
    for line in raw.splitlines():
        if line.startswith("@"):
            date = line[1:]
        elif line.startswith(":"):
            old, new = line.split("\t", 1)[0].split()[2:4]
            if new in shas:
                out.setdefault(new, [date, "~"])
            if old in shas and old != new and old in out:
                out[old][1] = max(out[old][1] if out[old][1] != "~" else "", date)
    return {k: (v[0], v[1]) for k, v in out.items()}


def project_name(repo: Path) -> str | None:
    """The distribution name a Python project publishes under, from HEAD's metadata."""
    from repolaunch.languages.python_deps import distribution_name

    def show(path: str) -> str:
        return _out(repo, "show", f"HEAD:{path}").decode(errors="replace")

    return distribution_name(show("pyproject.toml"), show("setup.cfg"), show("setup.py"))


def _releases(name: str) -> list[tuple[str, str, str]]:
    """(upload time, url, filename) of every sdist and wheel on PyPI, oldest first."""
    index = f"{PYPI}/{name}/json"
    with urllib.request.urlopen(index, timeout=60) as resp:
        doc = json.load(resp)
    out = []
    for files in (doc.get("releases") or {}).values():
        for f in files:
            if f.get("packagetype") in ("sdist", "bdist_wheel") and not f.get("yanked"):
                # a mirror of the index may answer with relative links
                out.append((f.get("upload_time_iso_8601") or f.get("upload_time") or "",
                            urllib.parse.urljoin(index, f["url"]), f["filename"]))
    return sorted(out)


def _members(data: bytes, filename: str) -> Iterator[bytes]:
    if filename.endswith((".whl", ".zip")):
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            for info in z.infolist():
                if not info.is_dir():
                    yield z.read(info)
        return
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as t:
        for m in t:
            if m.isfile():
                fh = t.extractfile(m)
                if fh is not None:
                    yield fh.read()


def recover_from_pypi(repo: Path, holes: dict[str, set[str]], *, log: Log = lambda m: None,
                      max_downloads: int = 6, name: str | None = None) -> set[str]:
    """Put back every missing blob a release archive of the project carries; returns the
    blob ids recovered. Network or index failures recover nothing and say so."""
    want = set(holes)
    name = name or project_name(repo)
    if not want or not name:
        return set()
    try:
        releases = _releases(name)
    except (OSError, ValueError) as exc:
        log(f"cannot list the releases of {name} on PyPI: {exc}")
        return set()
    alive = _lifetimes(repo, want)
    got: set[str] = set()
    hopeless: set[str] = set()  # alive when an archive was made, yet not in it: not packaged
    tried: set[str] = set()
    for _ in range(max_downloads):
        left = want - got - hopeless
        if not left:
            break
        # the archive (sdists, which carry tests and data, before wheels) made while the
        # most still-missing blobs were alive
        def covers(when: str, left: set[str] = left) -> set[str]:
            return {s for s in left if s in alive and alive[s][0] <= when < alive[s][1]}

        ranked = sorted((r for r in releases if r[1] not in tried),
                        key=lambda r: (len(covers(r[0])), not r[2].endswith(".whl"), r[0]))
        if not ranked or not covers(ranked[-1][0]):
            break
        when, url, filename = ranked[-1]
        tried.add(url)
        try:
            with urllib.request.urlopen(url, timeout=300) as resp:
                data = resp.read()
        except OSError as exc:
            log(f"cannot download {filename}: {exc}")
            continue
        found = set()
        for content in _members(data, filename):
            sha = blob_id(content)
            if sha in left and _out(repo, "hash-object", "-w", "--stdin",
                                    input=content).decode().strip() == sha:
                found.add(sha)
        got |= found
        if not filename.endswith(".whl"):
            hopeless |= covers(when) - found
        if found:
            log(f"recovered {len(found)} missing blob(s) from {filename}")
    return got


def stand_in_missing_blobs(repo: Path) -> int:
    """Point every blob the history names but the object store lacks at the empty blob
    (``refs/replace/<sha>``), so checkouts of any commit work; returns how many."""
    missing = _missing_ids(repo)
    if not missing:
        return 0
    empty = _out(repo, "hash-object", "-w", "--stdin", input=b"").decode().strip()
    for sha in missing:
        git("-C", str(repo), "update-ref", f"refs/replace/{sha}", empty)
    return len(missing)
