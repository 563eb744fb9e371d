"""What kind of change a commit or pull request is: bug_fix, feature, refactor or other
(`label_kind`), from its words and its shape."""

from __future__ import annotations

import re
from collections.abc import Iterable

from envs.models import TaskKind
from repolaunch.mine.links import strip_links

__all__ = ["label_kind"]


def _words(*stems: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(stems) + r")\b", re.IGNORECASE)


_BUG = _words(
    r"fix(?:e[sd]|ing)?", r"bug(?:s|fix|fixes)?", r"hotfix", r"crash(?:es|ed|ing)?",
    r"errors?", r"erroneous(?:ly)?", r"wrong(?:ly)?", r"incorrect(?:ly)?",
    r"regression(?:s)?", r"broken", r"break(?:s|ing)?", r"fail(?:s|ed|ing|ure|ures)?",
    r"mistakes?", r"leak(?:s|ing)?", r"hang(?:s|ing)?", r"panic(?:s|king)?",
    r"segfaults?", r"off-by-one", r"invalid", r"faulty", r"defect",
)
_FEATURE = _words(
    r"add(?:s|ed|ing)?", r"support(?:s|ed|ing)?", r"implement(?:s|ed|ing|ation)?",
    r"introduc(?:e|es|ed|ing)", r"allow(?:s|ed|ing)?", r"enabl(?:e|es|ed|ing)",
    r"feature(?:s)?",
)
_NEW = _words(r"new")  # a weak feature word: "move to the new API" is still a refactor
_REFACTOR = _words(
    r"refactor(?:s|ed|ing)?", r"renam(?:e|es|ed|ing)", r"clean(?:s|ed|ing)?[ -]?up",
    r"cleanup", r"simplif(?:y|ies|ied|ying)", r"mov(?:e|es|ed|ing)",
    r"extract(?:s|ed|ing)?", r"split(?:s|ting)?", r"reorganiz(?:e|es|ed|ing)",
    r"reorganis(?:e|es|ed|ing)", r"restructur(?:e|es|ed|ing)", r"tid(?:y|ies|ied)",
    r"inlin(?:e|es|ed|ing)", r"dedup\w*", r"deduplicat\w*", r"reformat\w*",
)


# Code spans and call-like names ("`add`", "add()", "Money::add()") are identifiers, not words.
_IDENTIFIERS = re.compile(r"`[^`\n]*`|[\w.:$-]+\(\)")


def label_kind(title: str, body: str = "", *, issue_titles: Iterable[str] = (),
               has_issue: bool = False, has_code: bool = True,
               has_tests: bool = False) -> TaskKind:
    """bug_fix / feature / refactor / other, from the change's words and shape.

    The title decides first (its leading verb is the author's own summary), then the body
    and the linked issues' titles. A refactor word counts only when no behaviour word
    (bug or feature) appears anywhere. With no words at all, a linked issue plus a code and
    a test change leans bug_fix: that is the shape of an issue-fixing pull request.
    """
    title = _IDENTIFIERS.sub(" ", strip_links(title))
    rest = _IDENTIFIERS.sub(" ", strip_links(body) + "\n" + "\n".join(issue_titles))
    everything = title + "\n" + rest
    behaviour = bool(_BUG.search(everything) or _FEATURE.search(everything))
    if _BUG.search(title):
        return TaskKind.BUG_FIX
    if _FEATURE.search(title):
        return TaskKind.FEATURE
    if _REFACTOR.search(title) and not behaviour:
        return TaskKind.REFACTOR
    if _BUG.search(rest):
        return TaskKind.BUG_FIX
    if _FEATURE.search(rest):
        return TaskKind.FEATURE
    if _REFACTOR.search(everything):
        return TaskKind.REFACTOR
    if has_issue and has_code and has_tests:
        return TaskKind.BUG_FIX
    if _NEW.search(everything):
        return TaskKind.FEATURE
    return TaskKind.OTHER
