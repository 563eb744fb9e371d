"""Mining Issue-PR candidates: the local git miner (`repolaunch.mine.git`).

    from repolaunch.mine import mine
    result = mine(Path("repo"), issues=Path("issues.jsonl"), state=Path("mine.state.jsonl"))

Candidates are `envs.models.SWETask`s without FAIL_TO_PASS / PASS_TO_PASS: validation
fills those in (or rejects the candidate) later.
"""

from __future__ import annotations

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
    "pr_number_of",
    "repo_name",
]
