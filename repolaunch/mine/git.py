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
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from enum import Enum
from pathlib import Path, PurePosixPath
from typing import Any

import git
from pydantic import BaseModel, ConfigDict, Field, field_validator

from envs.errors import UserError
from envs.models import Language, SWETask, TaskKind
from repolaunch import languages

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

# Every reason a miner rejects a change with; the GitHub miner adds the last two (a closed
# pull request that was not merged; no linked issue when one is required).
REASONS = (
    "root_commit", "merge_without_change", "empty", "binary_only", "docs_only",
    "tests_only", "no_tests", "oversized", "not_merged", "no_issue",
)

# --------------------------------------------------------------------------- path roles


class FileRole(str, Enum):
    CODE = "code"
    TEST = "test"
    DOCS = "docs"


# Directory names that make everything below them a test file. "testdata" and fixtures
# under a test directory are test files too: the test patch must carry what the new tests
# read (SWE-bench's test patches do).
TEST_DIRS = frozenset({
    "test", "tests", "spec", "specs", "__tests__", "__mocks__", "testing", "testdata",
    "test-data", "test_data", "e2e", "testutil", "testutils", "testhelpers", "test_helpers",
    "test-utils", "test_utils", "unittests", "unittest", "integration-tests",
    "integration_tests", "cypress",
})
# Maven/Gradle source sets: src/test/**, src/integrationTest/**, src/testFixtures/**.
_TEST_SOURCE_SETS = re.compile(r"(^|/)src/(test|it|integrationTest|testFixtures|[a-z]+Test)/")

DOCS_DIRS = frozenset({"docs", "doc", "documentation", "man", "website", "site-docs"})
_DOC_EXTS = frozenset({".md", ".markdown", ".rst", ".adoc", ".asciidoc", ".rdoc", ".pod"})
_DOC_STEMS = re.compile(
    r"(readme|changelog|changes|history|news|authors|contributors|contributing|license|"
    r"licence|copying|notice|code_of_conduct|security|support|maintainers|releasing)"
    r"([._-].*)?$",
    re.IGNORECASE,
)
# Root-level .txt files are docs except those that build or pin something.
_BUILD_TXT = re.compile(r"(cmakelists|requirements.*|constraints.*|.*-requirements)\.txt$", re.I)


def classify_path(path: str) -> FileRole:
    """Whether a changed file belongs to the tests, the docs or the code.

    Test rules come first, so a fixture such as ``tests/data/sample.md`` stays with the tests
    that read it; ``docs/`` and doc-like files are docs; everything else (sources, build
    files, CI, configuration) is code.
    """
    p = PurePosixPath(path)
    dirs = [d.lower() for d in p.parts[:-1]]
    name = p.name
    if any(d in TEST_DIRS for d in dirs) or _TEST_SOURCE_SETS.search(path):
        return FileRole.TEST
    if languages.test_file_rule().fullmatch(name):  # each language's own naming rule
        return FileRole.TEST
    if any(d in DOCS_DIRS for d in dirs):
        return FileRole.DOCS
    suffix = p.suffix.lower()
    if suffix in _DOC_EXTS or _DOC_STEMS.match(name):
        return FileRole.DOCS
    if not dirs and suffix == ".txt" and not _BUILD_TXT.match(name):
        return FileRole.DOCS
    return FileRole.CODE


# --------------------------------------------------------------------------- issue links

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


def test_path_pattern() -> str:
    """A PCRE (``grep -P``) that matches a path `classify_path` calls a test, for checks that
    run inside a container (has anything but tests changed?)."""
    dirs = "|".join(sorted(re.escape(d) for d in TEST_DIRS))
    return (f"(?:^|/)(?i:{dirs})/|{_TEST_SOURCE_SETS.pattern}|"
            f"(?:^|/)(?:{languages.test_file_rule().pattern})$")


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


def _strip_links(text: str) -> str:
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


# --------------------------------------------------------------------------- kind labels


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
    title = _IDENTIFIERS.sub(" ", _strip_links(title))
    rest = _IDENTIFIERS.sub(" ", _strip_links(body) + "\n" + "\n".join(issue_titles))
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


# --------------------------------------------------------------------------- issues file


def _parse_date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


class IssueComment(BaseModel):
    model_config = ConfigDict(frozen=True)

    body: str = ""
    created_at: str | None = None


class IssueRecord(BaseModel):
    """One issue of an issues export: ``{"number", "title", "body", "comments", "created_at"}``.

    Comments may be objects ``{"body", "created_at"}`` or plain strings (no date: such a
    comment can never be shown to be earlier than the fix, so it is not a hint).
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    number: int
    title: str = ""
    body: str | None = ""
    comments: list[IssueComment] = Field(default_factory=list)
    created_at: str | None = None

    @field_validator("comments", mode="before")
    @classmethod
    def _comments(cls, value: Any) -> Any:
        if value is None:
            return []
        return [{"body": c} if isinstance(c, str) else c for c in value]

    @property
    def problem_statement(self) -> str:
        return f"{self.title}\n{self.body or ''}"

    def hints_before(self, when: datetime) -> list[str]:
        out = []
        for c in self.comments:
            at = _parse_date(c.created_at)
            if at is not None and at < when:
                out.append(c.body)
        return out


def load_issues(path: Path) -> dict[int, IssueRecord]:
    """Read an issues export: JSONL (one issue a line) or a JSON array."""
    text = Path(path).read_text(encoding="utf-8")
    rows: list[Any]
    if text.lstrip().startswith("["):
        rows = json.loads(text)
    else:
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    out: dict[int, IssueRecord] = {}
    for row in rows:
        rec = IssueRecord.model_validate(row)
        out[rec.number] = rec
    return out


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


# --------------------------------------------------------------------------- git plumbing

# Pin diff output regardless of the user's configuration: prefixes, renames, colours,
# external diff drivers and textconv filters would all change what `git apply` receives.
_GIT_CFG = (
    "-c", "core.quotepath=false", "-c", "diff.noprefix=false", "-c", "diff.mnemonicprefix=false",
    "-c", "diff.relative=false", "-c", "color.ui=false", "-c", "diff.renames=false",
)
_DIFF_OPTS = ("--no-color", "--no-ext-diff", "--no-textconv", "--no-renames")


def _git_bytes(repo: git.Repo, *args: str) -> bytes:
    out = repo.git.execute(
        ["git", "--literal-pathspecs", *_GIT_CFG, *args],
        stdout_as_string=False, strip_newline_in_stdout=False,
    )
    return out if isinstance(out, bytes) else str(out).encode()


class _File:
    __slots__ = ("added", "binary", "deleted", "path", "role", "section")

    def __init__(self, path: str, added: int, deleted: int, binary: bool) -> None:
        self.path, self.added, self.deleted, self.binary = path, added, deleted, binary
        self.role = classify_path(path)
        self.section = ""


def _changed_files(repo: git.Repo, base: str, sha: str) -> list[_File]:
    raw = _git_bytes(repo, "diff", "--numstat", "-z", *_DIFF_OPTS, base, sha, "--")
    files = []
    for entry in raw.split(b"\0"):
        if not entry:
            continue
        added, deleted, path = entry.split(b"\t", 2)
        binary = added == b"-"
        files.append(_File(path.decode("utf-8", "replace"), 0 if binary else int(added),
                           0 if binary else int(deleted), binary))
    return files


def _fill_sections(repo: git.Repo, base: str, sha: str, files: list[_File]) -> None:
    """Attach each file's own section of `git diff base sha` to it.

    One diff call per commit; its ``diff --git`` sections come in the same order as
    ``--numstat`` lists the files (same diff machinery, same options). If the counts ever
    disagree, fall back to one call per path.
    """
    text = _git_bytes(
        repo, "diff", *_DIFF_OPTS, "--full-index", "--src-prefix=a/", "--dst-prefix=b/",
        base, sha, "--",
    ).decode("utf-8", "replace")
    sections = _split_sections(text)
    if len(sections) == len(files):
        for f, s in zip(files, sections, strict=True):
            f.section = s
        return
    for f in files:  # pragma: no cover - defensive
        f.section = _git_bytes(
            repo, "diff", *_DIFF_OPTS, "--full-index", "--src-prefix=a/", "--dst-prefix=b/",
            base, sha, "--", f.path,
        ).decode("utf-8", "replace")


def _split_sections(text: str) -> list[str]:
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


def _detect_language(repo: git.Repo, sha: str, cache: dict[tuple[str, ...], Language | None]
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
        archive = _git_bytes(repo, "archive", "--format=tar", sha)
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


def _msg(commit: git.Commit) -> str:
    m = commit.message
    return m.decode("utf-8", "replace") if isinstance(m, bytes) else m


def _title_body(message: str) -> tuple[str, str]:
    lines = message.strip().splitlines()
    if not lines:
        return "", ""
    return lines[0].strip(), "\n".join(lines[1:]).strip()


# --------------------------------------------------------------------------- state file


class _State:
    """Append-only JSONL: a header with the settings, then one record per processed commit."""

    def __init__(self, path: Path, settings: dict[str, Any]) -> None:
        self.path = path
        self.records: list[dict[str, Any]] = []
        if path.exists() and path.stat().st_size:
            lines = path.read_text(encoding="utf-8").splitlines()
            rows = []
            for i, line in enumerate(lines):
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError:
                    if i == len(lines) - 1:  # a line cut short by the interruption
                        break
                    raise
            header = rows[0] if rows else {}
            if header.get("type") != "header" or header.get("settings") != settings:
                raise ValueError(
                    f"{path} was written by a mining run with other settings; "
                    "delete it or pass another state path"
                )
            self.records = rows[1:]
            # rewrite without a torn last line, so appends start on a fresh line
            with path.open("w", encoding="utf-8") as fh:
                for row in rows:
                    fh.write(json.dumps(row) + "\n")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"type": "header", "settings": settings}) + "\n",
                            encoding="utf-8")
        self._fh = path.open("a", encoding="utf-8")

    def append(self, row: dict[str, Any]) -> None:
        self._fh.write(json.dumps(row) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


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
    store = _State(Path(state), settings) if state is not None else None
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
    message = _msg(commit)
    title, body = _title_body(message)
    pr = pr_number_of(message)
    is_merge = len(commit.parents) > 1
    authored = commit.authored_datetime
    text = message
    if is_merge:
        base = commit.parents[0]
        merged = [c for c in grepo.iter_commits(f"{base.hexsha}..{commit.hexsha}")
                  if c.hexsha != commit.hexsha]
        merged.reverse()  # oldest first
        text = "\n\n".join([message, *(_msg(c) for c in merged)])
        if merged:
            # hints are comments made before the pull request's first commit
            authored = min(c.authored_datetime for c in merged)
        if body:  # GitHub puts the pull request's title (and body) below "Merge pull..."
            title, body = _title_body(body)
        elif merged:
            title, body = _title_body(_msg(merged[0]))
            body = "\n\n".join(x for x in [body, *(_msg(c).strip() for c in merged[1:])] if x)
    issue_numbers = linked_issues(text, name)

    def reject(reason: str, detail: str, kind: TaskKind | None = None) -> Rejected:
        return Rejected(sha=commit.hexsha, reason=reason, detail=detail, pr_number=pr,
                        issue_numbers=issue_numbers, kind=kind)

    if not commit.parents:
        return reject("root_commit", "the first commit has no parent to be a base")
    base_sha = commit.parents[0].hexsha
    files = _changed_files(grepo, base_sha, commit.hexsha)
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

    _fill_sections(grepo, base_sha, commit.hexsha, text_files)
    patch = "".join(f.section for f in text_files if f.role is not FileRole.TEST)
    test_patch = "".join(f.section for f in tests)

    linked = [records[n] for n in issue_numbers if n in records]
    if linked:
        problem = "\n\n".join(r.problem_statement for r in linked)
        hints = "\n".join(h for r in linked for h in r.hints_before(authored))
    else:
        problem = f"{title}\n{body}"
        hints = ""
    lang = language or _detect_language(grepo, commit.hexsha, lang_cache)
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
