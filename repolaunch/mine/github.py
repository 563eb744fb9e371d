"""Mine Issue-PR candidates from the GitHub REST API (PyGithub).

    result = mine_github("owner/name", state=Path("gh.state.jsonl"))
    result.candidates   # list[SWETask], as the local miner (`repolaunch.mine.git`) makes them
    result.rejected     # list[Rejected]: the pull request's merge sha, reason, detail
    result.waits        # every rate-limit wait, as a line of text

What is a change: a merged pull request (``get_pulls(state="closed")``, oldest first,
``merged_at`` set; closed-unmerged ones are recorded as ``not_merged``). Its linked issues
come from the title, body and commit messages with SWE-bench's keywords
(`repolaunch.mine.git.linked_issues`); ``problem_statement`` = each linked issue's title and
body, ``hints_text`` = the issues' comments made before the pull request's first commit,
``created_at`` = the pull request's creation time, ``instance_id`` = ``owner__name-N``.

Patch source. With ``clone_dir`` the diff comes from a local bare mirror (made there with
``git clone --mirror`` of the repository's ``clone_url`` unless a clone or mirror of it is
found there, laid out ``owner/name`` or ``owner__name``, ``.git`` optional): base = the merge
commit's first parent, diff = base -> merge commit, exactly as the local miner diffs a
squash or merge commit (for a rebase merge of k commits, base = k first parents back).
Without it the pull request's diff is fetched from the API (``Accept:
application/vnd.github.v3.diff``) and base = the pull request's base sha, as SWE-bench
does. Either way the diff is split by the local miner's classifier and checked with its
reasons, in its order (empty, binary_only, docs_only, tests_only, no_tests, oversized).

Token: ``token``, else ``ENVFACTORY_GITHUB_TOKEN``, else ``GITHUB_TOKEN``; anonymous
without one. Rate limits: before each pull request, when ``X-RateLimit-Remaining`` is at
or below ``reserve`` the miner waits for ``X-RateLimit-Reset``; a 403 rate-limit answer or
a 429 is retried after ``Retry-After`` / the reset (PyGithub's `GithubRetry`). Every wait
is reported through ``log`` and kept in ``result.waits``, and none is longer than
``max_wait`` seconds: a longer one raises `RateLimitWait` (with ``state`` the run resumes
later where it stopped).

Resume: with ``state=PATH`` each processed pull request is appended to a JSONL file (a
header with the settings, then one candidate / rejection per pull request, flushed), so a
run cut short by ``limit``, an exception or Ctrl-C continues after the last recorded one
and ends with the same candidates as an uninterrupted run.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import git
from github import Auth, Github, GithubRetry
from github.PullRequest import PullRequest
from github.Repository import Repository
from pydantic import Field

from envs import diffs
from envs.errors import InfraError
from envs.gitcmd import git as run_git
from envs.models import Language, SWETask, TaskKind
from repolaunch import languages
from repolaunch.mine.git import (
    _DIFF_OPTS,
    FileRole,
    IssueRecord,
    MineResult,
    Rejected,
    _detect_language,
    _git_bytes,
    _State,
    classify_path,
    label_kind,
    linked_issues,
)
from repolaunch.sources import find_repo

__all__ = [
    "GitHubMineResult",
    "RateLimitWait",
    "find_repo",
    "mine_github",
    "parse_diff",
    "resolve_token",
]

Log = Callable[[str], None]



class RateLimitWait(InfraError):
    """A rate-limit wait longer than ``max_wait``: stop now, resume later with ``state``."""

    def __init__(self, wait: float, until: datetime | None = None) -> None:
        when = f" (reset at {until:%Y-%m-%d %H:%M:%S} UTC)" if until else ""
        super().__init__(f"GitHub rate limit: a {wait:.0f}s wait{when} is longer than "
                         "max_wait; rerun with the same state file after the reset")
        self.wait = wait


class GitHubMineResult(MineResult):
    waits: list[str] = Field(default_factory=list)  # one line per rate-limit wait


def resolve_token(token: str | None = None) -> str | None:
    return token or os.environ.get("ENVFACTORY_GITHUB_TOKEN") or os.environ.get("GITHUB_TOKEN") or None


# --------------------------------------------------------------------------- rate limits


class _VisibleRetry(GithubRetry):
    """GithubRetry whose sleeps are reported and capped.

    GithubRetry decides *whether* a 403 is a retry-able rate limit and how long the reset
    is; urllib3 then sleeps silently and, for ``Retry-After``, without a cap. This class
    does the sleeping itself so every wait is logged and none exceeds ``max_wait``.
    """

    def __init__(self, *, report: Log | None = None, max_wait: float = 900.0,
                 **kwargs: Any) -> None:
        kwargs.setdefault("max_rate_limit_wait", max_wait)
        kwargs.setdefault("secondary_rate_wait", min(60.0, max_wait))
        super().__init__(**kwargs)
        self.report = report
        self.max_wait = max_wait

    def new(self, **kw: Any) -> _VisibleRetry:
        kw.update(report=self.report, max_wait=self.max_wait)
        return super().new(**kw)  # type: ignore[return-value]

    def sleep(self, response: Any = None) -> None:
        after = self.get_retry_after(response) if response is not None else None
        wait = after if after is not None else self.get_backoff_time()
        if wait <= 0:
            return
        if wait > self.max_wait:
            raise RateLimitWait(wait)
        status = getattr(response, "status", None)
        if self.report is not None:
            self.report(f"GitHub answered {status}: waiting {wait:.1f}s before retrying "
                        f"(retry {len(self.history)})")
        time.sleep(wait)


# --------------------------------------------------------------------------- diffs


@dataclass
class DiffFile:
    path: str
    section: str
    binary: bool
    added: int
    deleted: int

    @property
    def role(self) -> FileRole:
        return classify_path(self.path)


def parse_diff(text: str) -> list[DiffFile]:
    """A ``git diff`` / GitHub ``.diff`` text as one `DiffFile` per file (`envs.diffs`,
    tolerant: a part that does not read as a diff is named by its headers, or left out)."""
    return [DiffFile(f.path, f.text, f.binary, f.added, f.removed)
            for f in diffs.parse(text, strict=False)]


def _judge(files: list[DiffFile], *, title: str, body: str, issue_titles: list[str],
           has_issue: bool, max_files: int, max_lines: int
           ) -> tuple[str, str, TaskKind | None] | tuple[str, str, TaskKind]:
    """(reason, detail, kind) with reason "" for a candidate — the local miner's checks."""
    if not files:
        return "empty", "the pull request changes no files", None
    text_files = [f for f in files if not f.binary]
    if not text_files:
        return "binary_only", f"{len(files)} binary file(s) and no text change", None
    code = [f for f in text_files if f.role is FileRole.CODE]
    tests = [f for f in text_files if f.role is FileRole.TEST]
    docs = [f for f in text_files if f.role is FileRole.DOCS]
    kind = label_kind(title, body, issue_titles=issue_titles, has_issue=has_issue,
                      has_code=bool(code), has_tests=bool(tests))
    if not code and not tests:
        return "docs_only", f"{len(docs)} docs file(s), no code or test change", kind
    if not code:
        return "tests_only", f"{len(tests)} test file(s), no code change", kind
    if not tests:
        return "no_tests", f"{len(code)} code file(s) changed without a test change", kind
    lines = sum(f.added + f.deleted for f in text_files)
    if len(files) > max_files:
        return "oversized", f"{len(files)} files > max_files {max_files}", kind
    if lines > max_lines:
        return "oversized", f"{lines} changed lines > max_lines {max_lines}", kind
    return "", "", kind


# --------------------------------------------------------------------------- local mirror


def _mirror(clone_dir: Path, full_name: str, clone_url: str, log: Log) -> git.Repo:
    found = find_repo(clone_dir, full_name)
    if found is None:
        found = clone_dir / f"{full_name.replace('/', '__')}.git"
        log(f"mirroring {clone_url} into {found} ...")
        found.parent.mkdir(parents=True, exist_ok=True)
        run_git("clone", "-q", "--mirror", clone_url, str(found), prompt=False, timeout=600)
    return git.Repo(found)


def _has_commit(repo: git.Repo, sha: str) -> bool:
    try:
        repo.git.cat_file("-e", f"{sha}^{{commit}}")
        return True
    except git.GitCommandError:
        return False


def _local_diff(repo: git.Repo, pr: PullRequest, merge_sha: str) -> tuple[str, str] | None:
    """(base, diff text) from the mirror, or None when the merge commit is not in it."""
    if not _has_commit(repo, merge_sha):
        try:  # a mirror made before the merge: fetch what it lacks
            repo.git.fetch("-q", "origin", "+refs/heads/*:refs/heads/*",
                           f"+refs/pull/{pr.number}/head:refs/pull/{pr.number}/head")
        except git.GitCommandError:
            pass
        if not _has_commit(repo, merge_sha):
            return None
    commit = repo.commit(merge_sha)
    if not commit.parents:
        return None
    base = commit.parents[0]
    title = (commit.message if isinstance(commit.message, str)
             else commit.message.decode("utf-8", "replace")).strip().partition("\n")[0]
    if len(commit.parents) == 1 and pr.commits > 1 and f"(#{pr.number})" not in title:
        # a rebase merge: the pull request's k commits are the k last first-parent commits
        back = commit
        for _ in range(pr.commits):
            if not back.parents:
                break
            back = back.parents[0]
        base = back
    text = _git_bytes(repo, "diff", *_DIFF_OPTS, "--full-index", "--src-prefix=a/",
                      "--dst-prefix=b/", base.hexsha, merge_sha, "--"
                      ).decode("utf-8", "replace")
    return base.hexsha, text


# --------------------------------------------------------------------------- the miner


def _api_diff(pr: PullRequest) -> str:
    # PyGithub has no call for the diff media type; its requester returns a non-JSON body
    # as {"data": text}, through the same retry and rate-limit handling as every call.
    _, data = pr.requester.requestJsonAndCheck(
        "GET", pr.url, headers={"Accept": "application/vnd.github.v3.diff"})
    return data.get("data", "") if isinstance(data, dict) else ""


def _iso(dt: datetime) -> str:
    return (dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)).isoformat()


def _issue(repo: Repository, number: int) -> IssueRecord | None:
    from github import UnknownObjectException

    try:
        issue = repo.get_issue(number)
        comments = [{"body": c.body or "", "created_at": _iso(c.created_at)}
                    for c in issue.get_comments()]
        return IssueRecord(number=number, title=issue.title or "", body=issue.body or "",
                           created_at=_iso(issue.created_at), comments=comments)
    except UnknownObjectException:
        return None


def mine_github(
    full_name: str,
    *,
    token: str | None = None,
    base_url: str = "https://api.github.com",
    clone_dir: Path | None = None,
    state: Path | None = None,
    limit: int | None = None,
    max_files: int = 50,
    max_lines: int = 5000,
    require_issue: bool = False,
    reserve: int = 5,
    max_wait: float = 900.0,
    per_page: int = 100,
    pause: float = 0.25,
    log: Log = lambda m: None,
) -> GitHubMineResult:
    """Candidates (and rejections with reasons) from a repository's merged pull requests.

    ``require_issue``: reject pull requests that link no issue (``no_issue``), as SWE-bench
    does; off by default, like the local miner. ``reserve``: wait for the rate-limit reset
    when this few requests remain. ``limit``: process at most this many new pull requests
    (``complete`` is then False). ``pause``: seconds between requests (PyGithub's
    throttle, which GitHub's guidance on secondary limits asks for). See the module
    docstring for the rest.
    """
    token = resolve_token(token)
    result = GitHubMineResult()

    def report(line: str) -> None:
        result.waits.append(line)
        log(line)

    retry = _VisibleRetry(report=report, max_wait=max_wait, total=8, backoff_factor=0.5,
                          status_forcelist=[*range(500, 600), 429])
    gh = Github(auth=Auth.Token(token) if token else None, base_url=base_url, retry=retry,
                per_page=per_page, timeout=30, seconds_between_requests=pause)
    settings = {"repo": full_name.lower(), "base_url": base_url, "max_files": max_files,
                "max_lines": max_lines, "require_issue": require_issue,
                "source": "clone" if clone_dir is not None else "api"}
    settings = {**settings,
                "key": hashlib.sha256(json.dumps(settings, sort_keys=True).encode()
                                      ).hexdigest()[:16]}
    done: set[int] = set()
    store = _State(Path(state), settings) if state is not None else None
    if store is not None:
        for row in store.records:
            if row.get("type") == "candidate":
                result.candidates.append(SWETask.model_validate(row["task"]))
            elif row.get("type") == "rejected":
                result.rejected.append(Rejected.model_validate(row["rejected"]))
            done.add(int(row["pr"]))
            result.last_sha = row.get("sha")
        result.processed = len(done)
    try:
        repo = gh.get_repo(full_name)
        name = repo.full_name
        owner_name = name.replace("/", "__")
        mirror = (_mirror(Path(clone_dir), name, repo.clone_url, log)
                  if clone_dir is not None else None)
        api_lang = languages.from_github(repo.language)
        lang_cache: dict[tuple[str, ...], Language | None] = {}
        new = 0
        for pr in repo.get_pulls(state="closed", sort="created", direction="asc"):
            if pr.number in done:
                continue
            if limit is not None and new >= limit:
                result.complete = False
                break
            _respect_rate_limit(gh, reserve, max_wait, report)
            outcome, sha = _examine(pr, repo, name=name, mirror=mirror, api_lang=api_lang,
                                    lang_cache=lang_cache, max_files=max_files,
                                    max_lines=max_lines, require_issue=require_issue)
            if isinstance(outcome, Rejected):
                result.rejected.append(outcome)
                row = {"type": "rejected", "pr": pr.number, "sha": sha,
                       "rejected": outcome.model_dump(mode="json")}
            else:
                outcome = outcome.model_copy(update={"instance_id": f"{owner_name}-{pr.number}"})
                result.candidates.append(outcome)
                row = {"type": "candidate", "pr": pr.number, "sha": sha,
                       "task": outcome.model_dump(mode="json")}
            if store is not None:
                store.append(row)
            done.add(pr.number)
            result.last_sha = sha
            result.processed += 1
            new += 1
            log(f"#{pr.number}: {'candidate' if row['type'] == 'candidate' else outcome.reason}")  # type: ignore[union-attr]
    finally:
        if store is not None:
            store.close()
        gh.close()
    return result


def _respect_rate_limit(gh: Github, reserve: int, max_wait: float, report: Log) -> None:
    """Wait for the reset when the last response said few requests remain."""
    remaining, limit = gh.requester.rate_limiting
    if limit < 0 or remaining > reserve:
        return
    reset = gh.requester.rate_limiting_resettime
    wait = reset - time.time() + 1  # +1: the reset happens at some point in that second
    if wait <= 0:
        return
    until = datetime.fromtimestamp(reset, timezone.utc)
    if wait > max_wait:
        raise RateLimitWait(wait, until)
    report(f"GitHub rate limit: {remaining} of {limit} requests left; waiting {wait:.1f}s "
           f"for the reset at {until:%H:%M:%S} UTC")
    time.sleep(wait)


def _examine(pr: PullRequest, repo: Repository, *, name: str, mirror: git.Repo | None,
             api_lang: Language | None, lang_cache: dict[tuple[str, ...], Language | None],
             max_files: int, max_lines: int, require_issue: bool
             ) -> tuple[SWETask | Rejected, str]:
    title, body = (pr.title or "").strip(), (pr.body or "").strip()
    merge_sha = pr.merge_commit_sha or pr.head.sha
    if pr.merged_at is None:
        return Rejected(sha=pr.head.sha, reason="not_merged",
                        detail="closed without being merged", pr_number=pr.number), pr.head.sha
    commits = list(pr.get_commits())
    # SWE-bench searches the title, the body and every commit message
    text = "\n\n".join([title, body, *(c.commit.message for c in commits)])
    issue_numbers = linked_issues(text, name)
    records = {n: r for n in issue_numbers if (r := _issue(repo, n)) is not None}

    def reject(reason: str, detail: str, kind: TaskKind | None = None
               ) -> tuple[Rejected, str]:
        return Rejected(sha=merge_sha, reason=reason, detail=detail, pr_number=pr.number,
                        issue_numbers=issue_numbers, kind=kind), merge_sha

    if require_issue and not issue_numbers:
        return reject("no_issue", "the pull request links no issue")
    local = _local_diff(mirror, pr, merge_sha) if mirror is not None else None
    base_sha, diff = local if local is not None else (pr.base.sha, _api_diff(pr))
    files = parse_diff(diff)
    reason, detail, kind = _judge(
        files, title=title, body=body, issue_titles=[r.title for r in records.values()],
        has_issue=bool(issue_numbers), max_files=max_files, max_lines=max_lines)
    if reason:
        return reject(reason, detail, kind)
    text_files = [f for f in files if not f.binary]
    patch = "".join(f.section for f in text_files if f.role is not FileRole.TEST)
    test_patch = "".join(f.section for f in text_files if f.role is FileRole.TEST)
    if records:
        first = min((c.commit.author.date for c in commits), default=pr.created_at)
        first = first if first.tzinfo else first.replace(tzinfo=timezone.utc)
        problem = "\n\n".join(r.problem_statement for r in records.values())
        hints = "\n".join(h for r in records.values() for h in r.hints_before(first))
    else:
        problem, hints = f"{title}\n{body}", ""
    lang = api_lang
    if mirror is not None and local is not None:
        lang = _detect_language(mirror, merge_sha, lang_cache) or api_lang
    return SWETask(
        instance_id="", repo=name, base_commit=base_sha, patch=patch, test_patch=test_patch,
        problem_statement=problem, hints_text=hints, created_at=_iso(pr.created_at),
        language=lang, issue_numbers=issue_numbers, pr_number=pr.number,
        kind=kind or TaskKind.OTHER,
    ), merge_sha
