"""Unified diffs, read with `unidiff`: the one reader of patches in envfactory.

    files = parse(patch)      # one FileDiff per file the patch touches, in patch order
    f.path                    # the path after the change (before it, for a deletion)
    f.source, f.target        # the path on each side; None for a new / a deleted file
    f.is_new, f.is_deleted, f.is_rename, f.binary, f.added, f.removed
    f.text                    # the file's own part of the patch, byte for byte
    paths(patch)              # every path the patch names, on either side, sorted

Paths come without git's ``a/`` / ``b/`` prefixes, and git's quoting (``"t\\303\\251st.py"``)
undone. A git file's text runs from its ``diff --git`` line to the next file's; a plain
diff's from the end of the file before (an ``Index:`` line is its own) to the next file's.
So the texts put together are the patch less what comes before git's first file (a mail's
header, a commit message). Binary changes (``Binary files ... differ``, ``GIT binary
patch``) are files with ``binary`` set.

A text that is not a unified diff (a hunk shorter or longer than its header says, a line
inside a hunk that is no diff line) raises `PatchError`, a ValueError whose one line names
where. ``parse(text, strict=False)`` keeps what it can instead, for the callers that were
always tolerant (`git apply` is the judge of a patch there): each ``diff --git`` part is
read alone, one whose hunks do not read is still a file, named by its headers with counts
0, and one that names no file is left out. Text with no diff in it is no file, either way.
A ``diff --git`` line is ambiguous when a name holds `` b/`` (``diff --git a/x b/y b/x
b/y``): such a part is named by its ``---`` / ``+++`` lines.
"""

from __future__ import annotations

import codecs
import dataclasses
import io
import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from unidiff import PatchSet
from unidiff.constants import (
    DEV_NULL,
    RE_DIFF_GIT_HEADER_NO_PREFIX,
    RE_HUNK_HEADER,
    RE_SOURCE_FILENAME,
    RE_TARGET_FILENAME,
)
from unidiff.errors import UnidiffParseError

__all__ = ["FileDiff", "PatchError", "parse", "paths"]


class PatchError(ValueError):
    """A text that does not read as a unified diff; the message is one line."""


@dataclass(frozen=True)
class FileDiff:
    """One file of a patch."""

    source: str | None  # the path before the change; None for a new file
    target: str | None  # the path after the change; None for a deleted file
    text: str  # this file's part of the patch, as it is there
    binary: bool = False
    added: int = 0  # lines
    removed: int = 0

    @property
    def path(self) -> str:
        """The path after the change; for a deleted file, the path it had."""
        return self.target if self.target is not None else self.source or ""

    @property
    def paths(self) -> tuple[str, ...]:
        """The file's paths on either side (one, unless it is renamed or copied)."""
        return tuple(dict.fromkeys(p for p in (self.source, self.target) if p is not None))

    @property
    def is_new(self) -> bool:
        return self.source is None

    @property
    def is_deleted(self) -> bool:
        return self.target is None

    @property
    def is_rename(self) -> bool:
        return None not in (self.source, self.target) and self.source != self.target


def parse(patch: str, *, strict: bool = True) -> list[FileDiff]:
    """The files a unified diff (git's or plain) touches, in patch order. Raises PatchError
    on a text that is not a diff, unless ``strict=False`` (see the module's notes)."""
    lines = _lines(patch)
    try:
        return _files(lines)
    except PatchError as exc:
        error = exc
    # Again one "diff --git" part at a time: a header is ambiguous when a name holds " b/"
    # (git writes "diff --git a/x b/y b/x b/y" for "x b/y"), and unidiff's reading of it
    # then disagrees with the part's "+++" line, which names the file as well.
    starts = [i for i, line in enumerate(lines) if RE_DIFF_GIT_HEADER_NO_PREFIX.match(line)]
    if strict:
        _files(lines[:starts[0] if starts else len(lines)])  # what comes before must read
    out = []
    for a, b in zip(starts, [*starts[1:], len(lines)][:len(starts)], strict=True):
        part = _part(lines[a:b], strict)
        if part is None:
            raise error
        out += part
    return out


def paths(patch: str, *, strict: bool = True) -> list[str]:
    """Every path a patch names, on either side (a rename gives both), sorted."""
    return sorted({p for f in parse(patch, strict=strict) for p in f.paths})


# --------------------------------------------------------------------------- reading


def _lines(text: str) -> list[str]:
    # as unidiff reads a text: split after each "\n" only ("\r" and the like stay in a line)
    return list(io.StringIO(text))


def _patchset(lines: list[str]) -> PatchSet:
    consumed = 0

    def feed() -> Iterator[str]:
        nonlocal consumed
        for line in lines:
            consumed += 1
            yield line

    try:
        return PatchSet(feed(), metadata_only=True)
    except UnidiffParseError as exc:
        what = (str(exc).strip().splitlines() or ["unreadable"])[0][:200]
        raise PatchError(f"not a unified diff: line {consumed}: {what}") from None


def _files(lines: list[str]) -> list[FileDiff]:
    found = _patchset(lines)
    starts = []
    for pf in found:
        i = (pf.diff_line_no or 1) - 1
        if lines[i].startswith("+++"):  # a plain diff's file: from its "---" line and the
            i -= 1 + len(pf.patch_info or ())  # lines before that belong to it
        elif not lines[i].startswith("diff --git "):  # "Binary files A and B differ"
            i -= len(pf.patch_info or ()) - 1
        starts.append(max(i, starts[-1] + 1 if starts else 0))
    ends = [*starts[1:], len(lines)][:len(starts)]
    out = []
    for pf, a, b in zip(found, starts, ends, strict=True):
        source, target = _path(pf.source_file), _path(pf.target_file)
        if source is None and target is None:
            continue
        out.append(FileDiff(source=source, target=target, text="".join(lines[a:b]),
                            binary=bool(pf.is_binary_file), added=pf.added,
                            removed=pf.removed))
    return out


def _part(part: list[str], strict: bool) -> list[FileDiff] | None:
    """The files of one "diff --git" part read alone; None when it does not read (strict),
    else as much of it as reads: its header alone (counts 0) or nothing."""
    try:
        return _files(part)
    except PatchError:
        pass
    head = list(itertools.takewhile(lambda ln: not RE_HUNK_HEADER.match(ln), part))
    names = [next((ln for ln in head if rx.match(ln)), "") for rx in (RE_SOURCE_FILENAME,
                                                                      RE_TARGET_FILENAME)]
    names = names if all(names) else []
    attempts = [names + part[len(head):]] if names else []
    if not strict:
        attempts += [head, names]
    for attempt in attempts:
        try:
            named = _files(attempt)[:1] if attempt else []
        except PatchError:
            continue
        if named:
            return [dataclasses.replace(named[0], text="".join(part))]
    return None if strict else []


def _path(name: str | None) -> str | None:
    """A side's path as a patch names it, without its prefix and quoting; None for none."""
    name = (name or "").rstrip("\r")
    if not name or name == DEV_NULL:
        return None
    if len(name) >= 2 and name[0] == name[-1] == '"':  # git's C-style quoting
        raw = codecs.escape_decode(name[1:-1].encode("utf-8"))[0]
        name = raw.decode("utf-8", "replace")
    return name[2:] if name[:2] in ("a/", "b/") else name
