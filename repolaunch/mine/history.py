"""Reading a local git history for the miners (GitPython): each changed file of a commit
with its role and its own section of the diff, the repository's "owner/name", the primary
language at a commit, a commit's message as title and body.

Diffs are made with pinned options (`GIT_CFG`, `DIFF_OPTS`), whatever the user's
configuration, so what `git apply` later receives does not depend on it. Binary files are
marked (``--numstat`` says ``-``): a text diff cannot carry them.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import git

from envs.models import Language
from repolaunch.mine.paths import classify_path

__all__ = ["DIFF_OPTS", "GIT_CFG", "ChangedFile", "changed_files", "detect_language",
           "fill_sections", "git_bytes", "message_of", "repo_name", "split_sections",
           "title_body"]

# Pin diff output regardless of the user's configuration: prefixes, renames, colours,
# external diff drivers and textconv filters would all change what `git apply` receives.
GIT_CFG = (
    "-c", "core.quotepath=false", "-c", "diff.noprefix=false", "-c", "diff.mnemonicprefix=false",
    "-c", "diff.relative=false", "-c", "color.ui=false", "-c", "diff.renames=false",
)
DIFF_OPTS = ("--no-color", "--no-ext-diff", "--no-textconv", "--no-renames")


def git_bytes(repo: git.Repo, *args: str) -> bytes:
    out = repo.git.execute(
        ["git", "--literal-pathspecs", *GIT_CFG, *args],
        stdout_as_string=False, strip_newline_in_stdout=False,
    )
    return out if isinstance(out, bytes) else str(out).encode()


class ChangedFile:
    __slots__ = ("added", "binary", "deleted", "path", "role", "section")

    def __init__(self, path: str, added: int, deleted: int, binary: bool) -> None:
        self.path, self.added, self.deleted, self.binary = path, added, deleted, binary
        self.role = classify_path(path)
        self.section = ""


def changed_files(repo: git.Repo, base: str, sha: str) -> list[ChangedFile]:
    raw = git_bytes(repo, "diff", "--numstat", "-z", *DIFF_OPTS, base, sha, "--")
    files = []
    for entry in raw.split(b"\0"):
        if not entry:
            continue
        added, deleted, path = entry.split(b"\t", 2)
        binary = added == b"-"
        files.append(ChangedFile(path.decode("utf-8", "replace"), 0 if binary else int(added),
                           0 if binary else int(deleted), binary))
    return files


def fill_sections(repo: git.Repo, base: str, sha: str, files: list[ChangedFile]) -> None:
    """Attach each file's own section of `git diff base sha` to it.

    One diff call per commit; its ``diff --git`` sections come in the same order as
    ``--numstat`` lists the files (same diff machinery, same options). If the counts ever
    disagree, fall back to one call per path.
    """
    text = git_bytes(
        repo, "diff", *DIFF_OPTS, "--full-index", "--src-prefix=a/", "--dst-prefix=b/",
        base, sha, "--",
    ).decode("utf-8", "replace")
    sections = split_sections(text)
    if len(sections) == len(files):
        for f, s in zip(files, sections, strict=True):
            f.section = s
        return
    for f in files:  # pragma: no cover - defensive
        f.section = git_bytes(
            repo, "diff", *DIFF_OPTS, "--full-index", "--src-prefix=a/", "--dst-prefix=b/",
            base, sha, "--", f.path,
        ).decode("utf-8", "replace")


def split_sections(text: str) -> list[str]:
    # A content line starts with ' ', '+', '-' or '\', so "diff --git " at the start of a
    # line is always a file header.
    sections: list[list[str]] = []
    for line in text.splitlines(keepends=True):
        if line.startswith("diff --git ") or not sections:
            sections.append([])
        sections[-1].append(line)
    return ["".join(s) for s in sections if s]


_REMOTE = re.compile(r"(?:[:/])([\w.-]+)/([\w.-]+?)(?:\.git)?/?$")


def repo_name(repo: git.Repo, path: Path) -> str:
    """"owner/name" from the ``origin`` remote's URL, else ``local/<dirname>``."""
    try:
        url = repo.remotes.origin.url
    except (AttributeError, IndexError, ValueError):
        url = ""
    m = _REMOTE.search(url.strip()) if url else None
    if m:
        return f"{m.group(1)}/{m.group(2)}"
    name = path.resolve().name
    return f"local/{name.removesuffix('.git') or name}"


def detect_language(repo: git.Repo, sha: str, cache: dict[tuple[str, ...], Language | None]
                    ) -> Language | None:
    """detect() on the commit's tree, exported to a temporary directory.

    Cached by the names at the root of the tree: the primary language follows the root
    build files and rarely moves, and exporting every commit of a long history is costly.
    """
    from repolaunch.detect import DetectionError, detect  # detect is heavy; only when needed

    commit = repo.commit(sha)
    key = tuple(sorted(item.name for item in commit.tree))
    if key in cache:
        return cache[key]
    tmp = Path(tempfile.mkdtemp(prefix="mine-detect-"))
    try:
        archive = git_bytes(repo, "archive", "--format=tar", sha)
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True,
                       capture_output=True)
        try:
            lang: Language | None = detect(tmp).primary
        except DetectionError:
            lang = None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    cache[key] = lang
    return lang


def message_of(commit: git.Commit) -> str:
    m = commit.message
    return m.decode("utf-8", "replace") if isinstance(m, bytes) else m


def title_body(message: str) -> tuple[str, str]:
    lines = message.strip().splitlines()
    if not lines:
        return "", ""
    return lines[0].strip(), "\n".join(lines[1:]).strip()
