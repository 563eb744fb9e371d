"""Mining Issue-PR candidates: the local git miner (`repolaunch.mine.git`) and the GitHub
miner (`repolaunch.mine.github`, loaded on first use: it pulls in PyGithub).

    from repolaunch.mine import mine, mine_github
    result = mine(Path("repo"), issues=Path("issues.jsonl"), state=Path("mine.state.jsonl"))
    result = mine_github("owner/name", clone_dir=Path("clones"), state=Path("gh.state.jsonl"))

Candidates are `envs.models.SWETask`s without FAIL_TO_PASS / PASS_TO_PASS: validation
fills those in (or rejects the candidate) later.
"""

from __future__ import annotations

from typing import Any

from repolaunch.mine.git import (
    REASONS,
    FileRole,
    IssueComment,
    IssueRecord,
    MineResult,
    Rejected,
    classify_path,
    label_kind,
    linked_issues,
    load_issues,
    mine,
    pr_number_of,
    repo_name,
)

__all__ = [
    "REASONS",
    "FileRole",
    "IssueComment",
    "IssueRecord",
    "MineResult",
    "Rejected",
    "classify_path",
    "label_kind",
    "linked_issues",
    "load_issues",
    "mine",
    "mine_github",
    "pr_number_of",
    "repo_name",
]


def __getattr__(name: str) -> Any:
    if name == "mine_github":
        from repolaunch.mine.github import mine_github

        return mine_github
    raise AttributeError(f"module 'repolaunch.mine' has no attribute {name!r}")
