"""Mine Issue-PR candidates from a local git history (GitPython; no network, no Docker).

    result = mine(Path("repo"), issues=Path("issues.jsonl"))
    result.candidates   # list[SWETask]: base_commit, patch, test_patch, problem_statement, ...
    result.rejected     # list[Rejected]: sha, reason, detail
    result.stats        # {"candidate": n, "docs_only": n, ...}

What is a change. The first-parent line of ``rev`` is walked oldest first, so the commits
*inside* a merged branch are part of their pull request, not changes of their own:

- a merge commit (``Merge pull request #N from ...`` gives ``pr_number``): the change is
  first parent -> merge, and its text is the merge message plus the merged commits' messages;
- a squash commit whose title ends in ``(#N)`` (``pr_number`` N);
- any other commit (no ``pr_number``; the instance id uses the short sha).

Base commit = the first parent. Issues are linked the way SWE-bench links them
(``collect/utils.py::extract_resolved_issues``): a keyword in {close, closes, closed, fix,
fixes, fixed, resolve, resolves, resolved} followed by ``#N`` or a full issue URL
``https://github.com/<owner>/<name>/issues/N``, case-insensitive, HTML comments stripped.
When the repository's ``origin`` names a GitHub repository, URLs of other repositories do
not count (SWE-bench builds its URL pattern from the repository's own name).

Patch split. Every changed file is *test*, *docs* or *code* (`classify_path`): test files go
to ``test_patch``; code and docs files go to ``patch``. The rules are per-language file-name
conventions plus test directories (see `TEST_DIRS` and each language's `Traits.test_files`)
instead of SWE-bench's "path contains 'test'" substring rule, so ``src/latest.py`` and
``contest.py`` are code, while ``testdata/`` fixtures are test files. Binary files cannot be carried by a
text diff and are left out of both patches (the commit is rejected when they are all it has).

Rejections (reason codes, in the order they are checked): ``root_commit`` (no parent, so no
base), ``merge_without_change``, ``empty``, ``binary_only``, ``docs_only``, ``tests_only``
(no code change), ``no_tests`` (code change without a test change: SWE-bench requires a
test patch), ``oversized`` (more than ``max_files`` files or ``max_lines`` changed lines).

Resume. With ``state=PATH`` every processed commit is appended to a JSONL file (a header,
then one record per commit: a candidate or a rejection) and flushed, so a run stopped at
any point (``limit``, Ctrl-C, a crash) continues after the last recorded commit.

Where the parts live: `paths.py` (test, docs or code), `links.py` (issue links, pull-request
numbers), `kinds.py` (`label_kind`), `issues.py` (the issues export), `history.py` (diffs and
commits through GitPython), `state.py` (the progress file); this module walks the history
and judges each change.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import git
from pydantic import BaseModel, ConfigDict, Field

from envs.errors import UserError
from envs.models import Language, SWETask, TaskKind
from repolaunch.mine.history import (
    DIFF_OPTS,
    changed_files,
    detect_language,
    fill_sections,
    git_bytes,
    message_of,
    repo_name,
    split_sections,
    title_body,
)
from repolaunch.mine.issues import IssueComment, IssueRecord, load_issues
from repolaunch.mine.kinds import label_kind
from repolaunch.mine.links import linked_issues, pr_number_of
from repolaunch.mine.paths import FileRole, classify_path, test_path_pattern  # noqa: F401
from repolaunch.mine.state import MineState

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

# the old private names the GitHub miner imports from here
_DIFF_OPTS, _git_bytes, _split_sections, _detect_language, _State = (
    DIFF_OPTS, git_bytes, split_sections, detect_language, MineState)

# Every reason a miner rejects a change with; the GitHub miner adds the last two (a closed
# pull request that was not merged; no linked issue when one is required).
REASONS = (
    "root_commit", "merge_without_change", "empty", "binary_only", "docs_only",
    "tests_only", "no_tests", "oversized", "not_merged", "no_issue",
)


# --------------------------------------------------------------------------- results


class Rejected(BaseModel):
    """A change that is not a candidate, with a reason code from `REASONS`."""

    model_config = ConfigDict(frozen=True)

    sha: str
    reason: str
    detail: str = ""
    pr_number: int | None = None
    issue_numbers: list[int] = Field(default_factory=list)
    kind: TaskKind | None = None  # what the change looked like, for reports


class MineResult(BaseModel):
    candidates: list[SWETask] = Field(default_factory=list)
    rejected: list[Rejected] = Field(default_factory=list)
    processed: int = 0  # commits looked at, including those restored from the state file
    last_sha: str | None = None  # the last processed commit
    complete: bool = True  # False when `limit` stopped the walk early

    @property
    def stats(self) -> dict[str, int]:
        counts = Counter(r.reason for r in self.rejected)
        return {"candidate": len(self.candidates), **dict(sorted(counts.items()))}

    def rejected_by_sha(self) -> dict[str, Rejected]:
        return {r.sha: r for r in self.rejected}



# --------------------------------------------------------------------------- the miner


def _issue_map(issues: Path | dict[int, IssueRecord] | None) -> dict[int, IssueRecord]:
    if issues is None:
        return {}
    if isinstance(issues, dict):
        return {int(k): v if isinstance(v, IssueRecord) else IssueRecord.model_validate(v)
                for k, v in issues.items()}
    return load_issues(Path(issues))


def _walk(repo: git.Repo, rev: str, since: str | None) -> Iterator[git.Commit]:
    kwargs: dict[str, Any] = {"first_parent": True, "reverse": True}
    if since:
        # `since` is a revision ("v1.0", a sha) when git knows it as one, else a date.
        try:
            repo.git.rev_parse("--verify", "--quiet", f"{since}^{{commit}}")
            rev = f"{since}..{rev}"
        except git.GitCommandError:
            kwargs["since"] = since
    yield from repo.iter_commits(rev, **kwargs)


def mine(
    repo: Path,
    *,
    issues: Path | dict[int, IssueRecord] | None = None,
    max_files: int = 50,
    max_lines: int = 5000,
    since: str | None = None,
    language: Language | None = None,
    rev: str = "HEAD",
    state: Path | None = None,
    limit: int | None = None,
) -> MineResult:
    """Candidates (and rejections with reasons) from the repository's history.

    ``issues``: an issues export (JSONL path or ``{number: IssueRecord}``) for problem
    statements and hints; without it the commit message is the problem statement.
    ``since``: a revision (mine only after it) or a date (``git log --since``).
    ``language``: skip detection and label every candidate with it.
    ``state``: a JSONL progress file; an existing one is resumed.
    ``limit``: process at most this many new commits, then stop (``complete`` is False).
    """
    path = Path(repo)
    try:
        grepo = git.Repo(path)
    except git.NoSuchPathError:
        raise UserError("no such repository", where=str(path)) from None
    except git.InvalidGitRepositoryError:
        raise UserError("not a git repository", where=str(path)) from None
    name = repo_name(grepo, path)
    owner_name = name.replace("/", "__")
    records = _issue_map(issues)
    settings = {
        "rev": rev, "since": since, "max_files": max_files, "max_lines": max_lines,
        "language": language.value if language else None,
        "issues": hashlib.sha256(json.dumps(
            {k: v.model_dump(mode="json") for k, v in sorted(records.items())},
            sort_keys=True).encode()).hexdigest()[:16],
    }
    result = MineResult()
    if not grepo.head.is_valid() and rev == "HEAD":
        return result  # no commits yet
    done: set[str] = set()
    used_ids: set[str] = set()
    store = MineState(Path(state), settings) if state is not None else None
    if store is not None:
        for row in store.records:
            if row.get("type") == "candidate":
                task = SWETask.model_validate(row["task"])
                result.candidates.append(task)
                used_ids.add(task.instance_id)
            elif row.get("type") == "rejected":
                result.rejected.append(Rejected.model_validate(row["rejected"]))
            done.add(row["sha"])
            result.last_sha = row["sha"]
        result.processed = len(done)
    lang_cache: dict[tuple[str, ...], Language | None] = {}
    new = 0
    try:
        for commit in _walk(grepo, rev, since):
            if commit.hexsha in done:
                continue
            if limit is not None and new >= limit:
                result.complete = False
                break
            outcome = _examine(grepo, commit, name=name, records=records, max_files=max_files,
                               max_lines=max_lines, language=language, lang_cache=lang_cache)
            if isinstance(outcome, Rejected):
                result.rejected.append(outcome)
                row = {"type": "rejected", "sha": commit.hexsha,
                       "rejected": outcome.model_dump(mode="json")}
            else:
                suffix = str(outcome.pr_number) if outcome.pr_number else commit.hexsha[:7]
                iid = f"{owner_name}-{suffix}"
                if iid in used_ids:  # the same PR number twice (a revert and a re-land)
                    iid = f"{iid}-{commit.hexsha[:7]}"
                used_ids.add(iid)
                outcome = outcome.model_copy(update={"instance_id": iid})
                result.candidates.append(outcome)
                row = {"type": "candidate", "sha": commit.hexsha,
                       "task": outcome.model_dump(mode="json")}
            if store is not None:
                store.append(row)
            done.add(commit.hexsha)
            result.last_sha = commit.hexsha
            result.processed += 1
            new += 1
    finally:
        if store is not None:
            store.close()
    return result


def _examine(grepo: git.Repo, commit: git.Commit, *, name: str,
             records: dict[int, IssueRecord], max_files: int, max_lines: int,
             language: Language | None,
             lang_cache: dict[tuple[str, ...], Language | None]) -> SWETask | Rejected:
    message = message_of(commit)
    title, body = title_body(message)
    pr = pr_number_of(message)
    is_merge = len(commit.parents) > 1
    authored = commit.authored_datetime
    text = message
    if is_merge:
        base = commit.parents[0]
        merged = [c for c in grepo.iter_commits(f"{base.hexsha}..{commit.hexsha}")
                  if c.hexsha != commit.hexsha]
        merged.reverse()  # oldest first
        text = "\n\n".join([message, *(message_of(c) for c in merged)])
        if merged:
            # hints are comments made before the pull request's first commit
            authored = min(c.authored_datetime for c in merged)
        if body:  # GitHub puts the pull request's title (and body) below "Merge pull..."
            title, body = title_body(body)
        elif merged:
            title, body = title_body(message_of(merged[0]))
            body = "\n\n".join(x for x in [body, *(message_of(c).strip() for c in merged[1:])] if x)
    issue_numbers = linked_issues(text, name)

    def reject(reason: str, detail: str, kind: TaskKind | None = None) -> Rejected:
        return Rejected(sha=commit.hexsha, reason=reason, detail=detail, pr_number=pr,
                        issue_numbers=issue_numbers, kind=kind)

    if not commit.parents:
        return reject("root_commit", "the first commit has no parent to be a base")
    base_sha = commit.parents[0].hexsha
    files = changed_files(grepo, base_sha, commit.hexsha)
    if not files:
        if is_merge:
            return reject("merge_without_change", "the merge changes nothing against its first parent")
        return reject("empty", "the commit changes no files")
    text_files = [f for f in files if not f.binary]
    if not text_files:
        return reject("binary_only", f"{len(files)} binary file(s) and no text change")
    code = [f for f in text_files if f.role is FileRole.CODE]
    tests = [f for f in text_files if f.role is FileRole.TEST]
    docs = [f for f in text_files if f.role is FileRole.DOCS]
    issue_titles = [records[n].title for n in issue_numbers if n in records]
    kind = label_kind(title, body if not is_merge else text, issue_titles=issue_titles,
                      has_issue=bool(issue_numbers), has_code=bool(code),
                      has_tests=bool(tests))
    if not code and not tests:
        return reject("docs_only", f"{len(docs)} docs file(s), no code or test change", kind)
    if not code:
        return reject("tests_only", f"{len(tests)} test file(s), no code change", kind)
    if not tests:
        return reject("no_tests", f"{len(code)} code file(s) changed without a test change", kind)
    lines = sum(f.added + f.deleted for f in text_files)
    if len(files) > max_files:
        return reject("oversized", f"{len(files)} files > max_files {max_files}", kind)
    if lines > max_lines:
        return reject("oversized", f"{lines} changed lines > max_lines {max_lines}", kind)

    fill_sections(grepo, base_sha, commit.hexsha, text_files)
    patch = "".join(f.section for f in text_files if f.role is not FileRole.TEST)
    test_patch = "".join(f.section for f in tests)

    linked = [records[n] for n in issue_numbers if n in records]
    if linked:
        problem = "\n\n".join(r.problem_statement for r in linked)
        hints = "\n".join(h for r in linked for h in r.hints_before(authored))
    else:
        problem = f"{title}\n{body}"
        hints = ""
    lang = language or detect_language(grepo, commit.hexsha, lang_cache)
    return SWETask(
        instance_id="",  # set by the caller, which knows the ids already used
        repo=name,
        base_commit=base_sha,
        patch=patch,
        test_patch=test_patch,
        problem_statement=problem,
        hints_text=hints,
        created_at=commit.committed_datetime.isoformat(),
        language=lang,
        issue_numbers=issue_numbers,
        pr_number=pr,
        kind=kind,
    )

