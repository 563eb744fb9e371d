"""Issue links and pull-request numbers in commit and pull-request text.

Issues are linked the way SWE-bench links them (``collect/utils.py::extract_resolved_issues``):
a keyword in `LINK_KEYWORDS` followed by ``#N`` or a full issue URL
``https://github.com/<owner>/<name>/issues/N``, case-insensitive, HTML comments stripped.
"""

from __future__ import annotations

import re

__all__ = ["LINK_KEYWORDS", "linked_issues", "pr_number_of", "strip_links"]

LINK_KEYWORDS = frozenset({
    "close", "closes", "closed", "fix", "fixes", "fixed", "resolve", "resolves", "resolved",
})
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
# SWE-bench's `(\w+)\s+#(\d+)`, plus an optional colon ("Fixes: #3", a common form) and the
# full-URL form. Group 1 = keyword, 2 = number of "#N", 3 = owner/name, 4 = number of a URL.
_LINK = re.compile(
    r"\b(\w+):?\s+(?:#(\d+)\b|https?://github\.com/([\w.-]+/[\w.-]+)/issues/(\d+)\b)",
    re.IGNORECASE,
)


def linked_issues(text: str, repo: str | None = None) -> list[int]:
    """Issue numbers a text closes, sorted and unique.

    ``repo`` ("owner/name"): when given and not ``local/...``, issue URLs of other
    repositories are ignored.
    """
    text = _HTML_COMMENT.sub("", text)
    found: set[int] = set()
    for m in _LINK.finditer(text):
        if m.group(1).lower() not in LINK_KEYWORDS:
            continue
        if m.group(2):
            found.add(int(m.group(2)))
        elif repo is None or repo.startswith("local/") or m.group(3).lower() == repo.lower():
            found.add(int(m.group(4)))
    return sorted(found)


def strip_links(text: str) -> str:
    """The text without its "Fixes #N" phrases: a link keyword is not a description."""
    return _LINK.sub(
        lambda m: "" if m.group(1).lower() in LINK_KEYWORDS else m.group(0),
        _HTML_COMMENT.sub("", text),
    )


_PR_MERGE = re.compile(r"^Merge pull request #(\d+) from ", re.IGNORECASE)
_PR_SQUASH = re.compile(r"\(#(\d+)\)\s*$")


def pr_number_of(message: str) -> int | None:
    """``Merge pull request #N from ...`` or a title ending in ``(#N)``."""
    title = message.strip().splitlines()[0] if message.strip() else ""
    m = _PR_MERGE.match(title) or _PR_SQUASH.search(title)
    return int(m.group(1)) if m else None
