"""A stand-in for github.com: a loopback HTTP server answering the REST calls the miner makes.

github.com cannot be reached from the machines envfactory is tested on, so the GitHub miner
(`repolaunch.mine.github`) is tested against this server instead. It serves one repository,
derived from a local git repository (typically a bundled sample, `data.samples`):

- every commit on the first-parent line whose title ends in ``(#N)`` (a squash merge) is a
  merged pull request #N: base = its parent, head = merge commit = the commit itself, title
  = the commit title without `` (#N)``, body = the rest of the message, created and merged
  at the commit's dates; a ``Merge pull request #N from ...`` commit is a merged PR too
  (base = first parent, head = second parent, merge commit = the merge);
- one closed, *unmerged* pull request (numbered after everything else) so the miner's
  merged-only filter is exercised;
- the sample's issues are issues, with their titles, bodies and dates; comment *i* of an
  issue is dated ``created_at + (i+1) hours``, and each issue a merged PR closes gets a late
  comment "Fixed by #N." one day after the merge (not a hint: it postdates the fix).
  `issues_export()` gives the same issues as `IssueRecord`s, for the local miner.

Endpoints (GET only; anything else is 404/405, as JSON ``{"message": ...}``):
``/repos/{o}/{r}``, ``/repos/{o}/{r}/pulls`` (``state``, ``sort``, ``direction``),
``/repos/{o}/{r}/pulls/{n}`` (JSON, or the diff with ``Accept:
application/vnd.github.v3.diff``), ``/repos/{o}/{r}/pulls/{n}/commits``,
``/repos/{o}/{r}/pulls/{n}/files``, ``/repos/{o}/{r}/issues/{n}``,
``/repos/{o}/{r}/issues/{n}/comments``, ``/rate_limit``. Lists are paginated with
``page``/``per_page`` (default 30, at most 100) and GitHub's ``Link`` header. Every
response carries ``X-RateLimit-Limit/Remaining/Reset/Used/Resource``.

Knobs for tests: ``token`` (requests without ``Authorization: token|Bearer <token>`` get
401 "Bad credentials"); ``rate_limit`` (requests per ``window_s`` window; when spent, 403
"API rate limit exceeded" until the reset); ``fail_once`` ("primary": one 403 with
Remaining 0 and a Reset one second ahead; "secondary": one 403 with ``Retry-After: 1``;
"429": one 429 with ``Retry-After: 1``) on the first request whose path contains
``fail_path``. `requests` records every request (method, path, status, authorization).

It binds 127.0.0.1 on a free port, serves from a daemon thread, reads no request body, and
answers at most ``max_requests`` requests (then 503), so a runaway client loop ends.

    with GitHubStandIn.from_sample(samples.get("py-textkit"), tmp) as gh:
        mine_github("samples/py-textkit", base_url=gh.base_url)
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from data import samples
from envs.models import Language
from repolaunch import languages
from repolaunch.mine.git import IssueRecord, linked_issues

__all__ = ["GitHubStandIn", "StandInIssue", "github_name"]


def github_name(language: Language) -> str:
    """GitHub's name for the language (the "language" field of a repository)."""
    return languages.traits(language).github_names[0]


_SQUASH = re.compile(r"\s*\(#(\d+)\)\s*$")
_MERGE = re.compile(r"^Merge pull request #(\d+) from (\S+)")
_PRIMARY_MSG = ("API rate limit exceeded for 127.0.0.1. (But here's the good news: "
                "Authenticated requests get a higher rate limit.)")
_SECONDARY_MSG = "You have exceeded a secondary rate limit. Please wait a few minutes."


def _gh_date(value: str | datetime) -> str:
    """GitHub's form: UTC with a Z."""
    dt = datetime.fromisoformat(value.replace("Z", "+00:00")) if isinstance(value, str) else value
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-c", "core.quotepath=false", *args], cwd=repo,
                          capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args[:2])} failed: {proc.stderr.strip()[:200]}")
    return proc.stdout


@dataclass(frozen=True)
class StandInIssue:
    number: int
    title: str
    body: str
    created_at: str
    comments: tuple[tuple[str, str], ...] = ()  # (body, created_at)


@dataclass
class _Commit:
    sha: str
    parents: list[str]
    message: str
    author_date: str
    committer_date: str


@dataclass
class _Pull:
    number: int
    title: str
    body: str
    base: str
    head: str
    merge_commit: str | None
    commits: list[_Commit]
    created_at: str
    closed_at: str
    merged: bool
    branch: str = ""
    files: list[dict[str, Any]] = field(default_factory=list)


class GitHubStandIn:
    """See the module docstring. Use as a context manager, or `start()` / `stop()`."""

    def __init__(self, repo: Path, *, full_name: str, issues: Iterable[StandInIssue] = (),
                 language: Language | None = None, token: str | None = None,
                 rate_limit: int | None = None, window_s: float = 2.0,
                 fail_once: str | None = None, fail_path: str = "/issues/",
                 unmerged: bool = True, late_comments: bool = True,
                 max_requests: int = 10_000) -> None:
        if fail_once not in (None, "primary", "secondary", "429"):
            raise ValueError(f"fail_once: {fail_once!r}")
        self.repo = Path(repo).resolve()
        self.full_name = full_name
        self.owner, self.name = full_name.split("/", 1)
        self.language = language
        self.token = token
        self.rate_limit = rate_limit
        self.window_s = window_s
        self.fail_once = fail_once
        self.fail_path = fail_path
        self.max_requests = max_requests
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._failed = False
        self._window_start = time.time()
        self._used = 0
        self.pulls = self._derive_pulls(unmerged)
        self.issues = self._derive_issues(list(issues), late_comments)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_sample(cls, sample: Any, dest: Path, *, owner: str = "samples",
                    **kwargs: Any) -> GitHubStandIn:
        """Write a `data.samples.SampleRepo` under dest (if not there yet) and serve it.

        The written repository's ``origin`` is set to the github.com URL of the stand-in's
        repository, so the local miner names it the same ("owner/name").
        """
        path = Path(dest) / sample.name
        if not path.exists():
            samples.write(sample, Path(dest))
            _git(path, "remote", "add", "origin", f"https://github.com/{owner}/{sample.name}.git")
        hours = timedelta(hours=1)
        issues = []
        for i in sample.issues:
            created = datetime.fromisoformat(i.created_at)
            issues.append(StandInIssue(
                number=i.number, title=i.title, body=i.body, created_at=_gh_date(created),
                comments=tuple((c, _gh_date(created + (k + 1) * hours))
                               for k, c in enumerate(i.comments))))
        return cls(path, full_name=f"{owner}/{sample.name}", issues=issues,
                   language=sample.language, **kwargs)

    def _log_commits(self, rev: str, *extra: str) -> list[_Commit]:
        out = _git(self.repo, "log", "--reverse", "--format=%H%x1f%P%x1f%aI%x1f%cI%x1f%B%x1e",
                   *extra, rev)
        commits = []
        for rec in out.split("\x1e"):
            rec = rec.strip("\n")
            if not rec:
                continue
            sha, parents, adate, cdate, message = rec.split("\x1f", 4)
            commits.append(_Commit(sha, parents.split(), message.strip() + "\n",
                                   _gh_date(adate), _gh_date(cdate)))
        return commits

    def _derive_pulls(self, unmerged: bool) -> dict[int, _Pull]:
        pulls: dict[int, _Pull] = {}
        for c in self._log_commits("HEAD", "--first-parent"):
            title, _, body = c.message.strip().partition("\n")
            if (m := _MERGE.match(title)) and len(c.parents) > 1:
                inner = self._log_commits(f"{c.parents[0]}..{c.parents[1]}")
                pr_title, _, pr_body = body.strip().partition("\n")
                pulls[int(m.group(1))] = _Pull(
                    number=int(m.group(1)), title=pr_title.strip() or title,
                    body=pr_body.strip(), base=c.parents[0], head=c.parents[1],
                    merge_commit=c.sha, commits=inner or [c],
                    created_at=(inner or [c])[0].author_date, closed_at=c.committer_date,
                    merged=True, branch=m.group(2))
            elif (m := _SQUASH.search(title)) and c.parents:
                n = int(m.group(1))
                pulls[n] = _Pull(
                    number=n, title=_SQUASH.sub("", title), body=body.strip(),
                    base=c.parents[0], head=c.sha, merge_commit=c.sha, commits=[c],
                    created_at=c.author_date, closed_at=c.committer_date, merged=True,
                    branch=f"pr-{n}")
        if unmerged:
            # A closed pull request that was never merged: the miner must skip it.
            head = self._log_commits("HEAD", "-1")[0]
            n = max([0, *pulls], default=0) + 100
            pulls[n] = _Pull(number=n, title="Try another approach", body="Superseded.",
                             base=head.parents[0] if head.parents else head.sha,
                             head=head.sha, merge_commit=None, commits=[head],
                             created_at=head.author_date, closed_at=head.committer_date,
                             merged=False, branch="abandoned")
        return pulls

    def _derive_issues(self, issues: list[StandInIssue], late: bool
                       ) -> dict[int, StandInIssue]:
        out = {i.number: i for i in issues}
        if late:
            for pr in self.pulls.values():
                if not pr.merged:
                    continue
                text = "\n".join([pr.title, pr.body, *(c.message for c in pr.commits)])
                when = _gh_date(datetime.fromisoformat(pr.closed_at.replace("Z", "+00:00"))
                                + timedelta(days=1))
                for n in linked_issues(text, self.full_name):
                    if n in out:
                        i = out[n]
                        out[n] = StandInIssue(i.number, i.title, i.body, i.created_at,
                                              (*i.comments, (f"Fixed by #{pr.number}.", when)))
        return out

    def issues_export(self) -> dict[int, IssueRecord]:
        """The served issues as the local miner's `IssueRecord`s (same comments and dates)."""
        return {n: IssueRecord(number=n, title=i.title, body=i.body, created_at=i.created_at,
                               comments=[{"body": b, "created_at": d} for b, d in i.comments])
                for n, i in self.issues.items()}

    # ------------------------------------------------------------------ lifecycle

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("the stand-in is not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> GitHubStandIn:
        handler = type("Handler", (_Handler,), {"standin": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.1}, daemon=True,
                                        name="github-standin")
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> GitHubStandIn:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ JSON shapes

    def _api(self, path: str) -> str:
        return f"{self.base_url}/repos/{self.full_name}{path}"

    def _user(self) -> dict[str, Any]:
        return {"login": "octo", "id": 1, "type": "User",
                "url": f"{self.base_url}/users/octo"}

    def repo_json(self) -> dict[str, Any]:
        return {
            "id": 1, "name": self.name, "full_name": self.full_name,
            "owner": {"login": self.owner, "id": 2, "type": "Organization",
                      "url": f"{self.base_url}/users/{self.owner}"},
            "private": False, "default_branch": "main",
            "language": github_name(self.language) if self.language else None,
            "url": self._api(""), "html_url": f"https://github.com/{self.full_name}",
            # a local path: clones work offline, where github.com's URL would not
            "clone_url": self.repo.as_uri(),
            "pulls_url": self._api("/pulls{/number}"),
            "issues_url": self._api("/issues{/number}"),
        }

    def pull_json(self, pr: _Pull) -> dict[str, Any]:
        return {
            "id": 1000 + pr.number, "number": pr.number, "state": "closed",
            "title": pr.title, "body": pr.body or None, "user": self._user(),
            "created_at": pr.created_at, "updated_at": pr.closed_at,
            "closed_at": pr.closed_at, "merged_at": pr.closed_at if pr.merged else None,
            "merged": pr.merged, "merge_commit_sha": pr.merge_commit,
            "commits": len(pr.commits),
            "base": {"ref": "main", "sha": pr.base, "label": f"{self.owner}:main",
                     "repo": self.repo_json()},
            "head": {"ref": pr.branch, "sha": pr.head, "label": f"{self.owner}:{pr.branch}",
                     "repo": self.repo_json()},
            "url": self._api(f"/pulls/{pr.number}"),
            "html_url": f"https://github.com/{self.full_name}/pull/{pr.number}",
            "diff_url": f"https://github.com/{self.full_name}/pull/{pr.number}.diff",
            "commits_url": self._api(f"/pulls/{pr.number}/commits"),
            "issue_url": self._api(f"/issues/{pr.number}"),
        }

    def commit_json(self, c: _Commit) -> dict[str, Any]:
        who = {"name": "envfactory samples", "email": "samples@envfactory.local"}
        return {
            "sha": c.sha, "url": self._api(f"/commits/{c.sha}"),
            "html_url": f"https://github.com/{self.full_name}/commit/{c.sha}",
            "commit": {"message": c.message.rstrip("\n"),
                       "author": {**who, "date": c.author_date},
                       "committer": {**who, "date": c.committer_date}},
            "parents": [{"sha": p, "url": self._api(f"/commits/{p}")} for p in c.parents],
        }

    def issue_json(self, i: StandInIssue) -> dict[str, Any]:
        return {
            "id": 5000 + i.number, "number": i.number, "title": i.title, "body": i.body,
            "state": "closed", "user": self._user(), "comments": len(i.comments),
            "created_at": i.created_at,
            "updated_at": i.comments[-1][1] if i.comments else i.created_at,
            "url": self._api(f"/issues/{i.number}"),
            "comments_url": self._api(f"/issues/{i.number}/comments"),
            "html_url": f"https://github.com/{self.full_name}/issues/{i.number}",
        }

    def comments_json(self, i: StandInIssue) -> list[dict[str, Any]]:
        return [{"id": 9000 + i.number * 100 + k, "body": body, "user": self._user(),
                 "created_at": at, "updated_at": at,
                 "url": self._api(f"/issues/comments/{9000 + i.number * 100 + k}")}
                for k, (body, at) in enumerate(i.comments)]

    def diff(self, pr: _Pull) -> str:
        # GitHub's pull-request diff: merge base of base and head -> head, abbreviated index
        # lines, renames detected.
        base = _git(self.repo, "merge-base", pr.base, pr.head).strip() or pr.base
        return _git(self.repo, "diff", "--no-color", "--no-ext-diff", "-M", base, pr.head)

    def files_json(self, pr: _Pull) -> list[dict[str, Any]]:
        base = _git(self.repo, "merge-base", pr.base, pr.head).strip() or pr.base
        out = []
        for line in _git(self.repo, "diff", "--numstat", "--no-renames", base,
                         pr.head).splitlines():
            added, deleted, path = line.split("\t", 2)
            a, d = (0, 0) if added == "-" else (int(added), int(deleted))
            out.append({"filename": path, "status": "modified", "additions": a,
                        "deletions": d, "changes": a + d})
        return out

    # ------------------------------------------------------------------ rate limits

    def rate_headers(self) -> dict[str, str]:
        limit = self.rate_limit or 5000
        reset = self._window_start + (self.window_s if self.rate_limit else 3600)
        return {"X-RateLimit-Limit": str(limit),
                "X-RateLimit-Remaining": str(max(0, limit - self._used)),
                "X-RateLimit-Reset": str(math.ceil(reset)),
                "X-RateLimit-Used": str(self._used), "X-RateLimit-Resource": "core"}

    def _admit(self, path: str) -> tuple[int, dict[str, str], str] | None:
        """Count the request against the window; the failure response when it must fail."""
        with self._lock:
            now = time.time()
            if self.rate_limit and now >= math.ceil(self._window_start + self.window_s):
                self._window_start, self._used = now, 0
            if self.fail_once and not self._failed and self.fail_path in path:
                self._failed = True
                if self.fail_once == "primary":
                    headers = {**self.rate_headers(), "X-RateLimit-Remaining": "0",
                               "X-RateLimit-Reset": str(math.ceil(now + 1))}
                    return 403, headers, _PRIMARY_MSG
                status = 429 if self.fail_once == "429" else 403
                return status, {**self.rate_headers(), "Retry-After": "1"}, _SECONDARY_MSG
            if self.rate_limit and self._used >= self.rate_limit:
                return 403, self.rate_headers(), _PRIMARY_MSG
            self._used += 1
            return None


class _Handler(BaseHTTPRequestHandler):
    standin: GitHubStandIn
    timeout = 10  # seconds a connection may sit idle: no handler blocks forever
    server_version = "GitHubStandIn/1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the requests are recorded in `standin.requests`

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None,
              content_type: str = "application/json; charset=utf-8") -> None:
        body = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
        # recorded before the answer goes out: a client that has its answer must find the
        # request in `standin.requests` (recording after the write raced the client)
        s = self.standin
        s.requests.append({"method": self.command, "path": self.path, "status": status,
                           "authorization": self.headers.get("Authorization"),
                           "accept": self.headers.get("Accept")})
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        self._send(status, {"message": message,
                            "documentation_url": "https://docs.github.com/rest"}, headers)

    def do_POST(self) -> None:
        self._error(405, "Method not allowed: the stand-in is read-only")

    do_PUT = do_PATCH = do_DELETE = do_POST

    def do_GET(self) -> None:
        s = self.standin
        if len(s.requests) >= s.max_requests:
            self._error(503, "stand-in request budget spent")
            return
        if s.token and self.headers.get("Authorization") not in (
                f"token {s.token}", f"Bearer {s.token}"):
            self._error(401, "Bad credentials", s.rate_headers())
            return
        url = urlsplit(self.path)
        path = url.path.rstrip("/") or "/"
        failure = s._admit(path)
        if failure is not None:
            status, headers, message = failure
            self._error(status, message, headers)
            return
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        try:
            self._route(path, query)
        except BrokenPipeError:  # pragma: no cover - the client went away
            pass

    def _route(self, path: str, query: dict[str, str]) -> None:
        s = self.standin
        if path == "/rate_limit":
            h = s.rate_headers()
            core = {"limit": int(h["X-RateLimit-Limit"]),
                    "remaining": int(h["X-RateLimit-Remaining"]),
                    "reset": int(h["X-RateLimit-Reset"]), "used": s._used}
            self._send(200, {"resources": {"core": core, "search": core, "graphql": core},
                             "rate": core}, h)
            return
        m = re.fullmatch(r"/repos/([^/]+)/([^/]+)(/.*)?", path)
        if not m or f"{m.group(1)}/{m.group(2)}".lower() != s.full_name.lower():
            self._error(404, "Not Found", s.rate_headers())
            return
        rest = m.group(3) or ""
        if rest == "":
            self._send(200, s.repo_json(), s.rate_headers())
        elif rest == "/pulls":
            state = query.get("state", "open")
            pulls = list(s.pulls.values()) if state in ("closed", "all") else []
            key = "closed_at" if query.get("sort") == "updated" else "created_at"
            desc = query.get("direction", "desc") == "desc"
            pulls.sort(key=lambda p: (getattr(p, key), p.number), reverse=desc)
            self._page([s.pull_json(p) for p in pulls], query)
        elif pm := re.fullmatch(r"/pulls/(\d+)(/commits|/files)?", rest):
            pr = s.pulls.get(int(pm.group(1)))
            if pr is None:
                self._error(404, "Not Found", s.rate_headers())
            elif pm.group(2) == "/commits":
                self._page([s.commit_json(c) for c in pr.commits], query)
            elif pm.group(2) == "/files":
                self._page(s.files_json(pr), query)
            elif "diff" in (self.headers.get("Accept") or ""):
                self._send(200, s.diff(pr), s.rate_headers(),
                           content_type="text/plain; charset=utf-8")
            else:
                self._send(200, s.pull_json(pr), s.rate_headers())
        elif im := re.fullmatch(r"/issues/(\d+)(/comments)?", rest):
            issue = s.issues.get(int(im.group(1)))
            if issue is None:
                self._error(404, "Not Found", s.rate_headers())
            elif im.group(2):
                self._page(s.comments_json(issue), query)
            else:
                self._send(200, s.issue_json(issue), s.rate_headers())
        else:
            self._error(404, "Not Found", s.rate_headers())

    def _page(self, items: list[Any], query: dict[str, str]) -> None:
        s = self.standin
        try:
            per_page = min(100, max(1, int(query.get("per_page", "30"))))
            page = max(1, int(query.get("page", "1")))
        except ValueError:
            self._error(422, "Validation Failed", s.rate_headers())
            return
        last = max(1, math.ceil(len(items) / per_page))
        chunk = items[(page - 1) * per_page: page * per_page]
        base = s.base_url + urlsplit(self.path).path

        def link(p: int, rel: str) -> str:
            return f'<{base}?{urlencode({**query, "per_page": per_page, "page": p})}>; rel="{rel}"'

        links = []
        if page < last:
            links += [link(page + 1, "next"), link(last, "last")]
        if page > 1:
            links += [link(1, "first"), link(page - 1, "prev")]
        headers = s.rate_headers()
        if links:
            headers["Link"] = ", ".join(links)
        self._send(200, chunk, headers)
