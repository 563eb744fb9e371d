"""The GitHub miner against the stand-in for github.com (`tests.repolaunch.mine.github_standin`).

The stand-in serves a sample repository's squash commits as merged pull requests and its
issues as issues. The miner must find what the local miner finds on the same history
(instance ids, base commits, patches, test patches, issue numbers, kinds), plus problem
statements and hints, with a token sent as a header, rate limits waited out, and an
interrupted run resumed to the same result.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from data import samples
from repolaunch.mine import REASONS, mine
from repolaunch.mine import github as gh_mod
from repolaunch.mine.github import RateLimitWait, find_repo, mine_github, parse_diff
from tests.repolaunch.mine.github_standin import GitHubStandIn

FAST = {"pause": 0.0}
_INDEX = re.compile(r"^index [0-9a-f]+\.\.[0-9a-f]+( \d+)?$", re.MULTILINE)


def fields(task) -> dict:
    return {k: getattr(task, k) for k in (
        "instance_id", "repo", "base_commit", "patch", "test_patch", "issue_numbers",
        "pr_number", "kind", "problem_statement", "hints_text", "created_at")}


def local_pr_candidates(standin: GitHubStandIn):
    res = mine(standin.repo, issues=standin.issues_export())
    return [c for c in res.candidates if c.pr_number is not None], res


@pytest.fixture()
def textkit(tmp_path: Path):
    with GitHubStandIn.from_sample(samples.get("py-textkit"), tmp_path) as s:
        yield s


@pytest.mark.parametrize("name", samples.names())
def test_clone_mode_equals_the_local_miner(name: str, tmp_path: Path) -> None:
    with GitHubStandIn.from_sample(samples.get(name), tmp_path / "src") as s:
        res = mine_github(s.full_name, base_url=s.base_url, clone_dir=tmp_path / "clones", **FAST)
        local, lres = local_pr_candidates(s)
    assert [c.model_dump() for c in res.candidates] == [c.model_dump() for c in local]
    assert res.candidates, "every sample has at least one issue-fixing pull request"
    # every PR the local miner rejected is rejected for the same reason
    local_rej = {r.pr_number: r.reason for r in lres.rejected if r.pr_number}
    gh_rej = {r.pr_number: r.reason for r in res.rejected}
    assert {n: gh_rej[n] for n in local_rej} == local_rej
    assert "not_merged" in gh_rej.values()  # the closed, unmerged pull request
    assert set(gh_rej.values()) <= set(REASONS)  # one list of reason codes for both miners


@pytest.mark.parametrize("name", samples.names())
def test_api_diff_mode_finds_the_same_candidates(name: str, tmp_path: Path) -> None:
    with GitHubStandIn.from_sample(samples.get(name), tmp_path) as s:
        res = mine_github(s.full_name, base_url=s.base_url, **FAST)
        local, _ = local_pr_candidates(s)
        assert any("diff" in (r["accept"] or "") for r in s.requests)
    assert [c.instance_id for c in res.candidates] == [c.instance_id for c in local]
    for a, b in zip(res.candidates, local, strict=True):
        fa, fb = fields(a), fields(b)
        # GitHub's diff abbreviates blob ids; everything else is byte for byte the same
        for k in ("patch", "test_patch"):
            fa[k], fb[k] = _INDEX.sub("index", fa[k]), _INDEX.sub("index", fb[k])
        assert fa == fb
        assert a.language == b.language


def test_problem_statements_and_hints_come_from_the_issues(textkit: GitHubStandIn) -> None:
    res = mine_github(textkit.full_name, base_url=textkit.base_url, **FAST)
    by_id = {c.instance_id: c for c in res.candidates}
    task = by_id["samples__py-textkit-3"]
    assert task.issue_numbers == [2]
    assert task.problem_statement.startswith(
        "truncate() returns more than width characters for tiny widths\n`truncate(")
    # the comment made before the fix is a hint; the "Fixed by #3." made after is not
    assert task.hints_text == "Confirmed: the slice goes negative when width < len(ellipsis)."
    assert "Fixed by" in "".join(b for b, _ in textkit.issues[2].comments)
    assert by_id["samples__py-textkit-6"].hints_text == ""
    assert task.created_at == "2023-01-20T09:05:00+00:00"


def test_token_is_sent_as_a_header(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from github import BadCredentialsException

    with GitHubStandIn.from_sample(samples.get("ruby-roman"), tmp_path, token="s3cret") as s:
        monkeypatch.delenv("ENVFACTORY_GITHUB_TOKEN", raising=False)
        monkeypatch.delenv("GITHUB_TOKEN", raising=False)
        with pytest.raises(BadCredentialsException):
            mine_github(s.full_name, base_url=s.base_url, **FAST)
        n = len(s.requests)
        res = mine_github(s.full_name, base_url=s.base_url, token="s3cret", **FAST)
        assert [c.pr_number for c in res.candidates] == [2, 4]
        assert {r["authorization"] for r in s.requests[n:]} == {"token s3cret"}
        monkeypatch.setenv("GITHUB_TOKEN", "s3cret")  # from the environment too
        assert len(mine_github(s.full_name, base_url=s.base_url, **FAST).candidates) == 2


@pytest.mark.parametrize("kind", ["primary", "secondary", "429"])
def test_a_rate_limit_answer_is_waited_out(kind: str, tmp_path: Path) -> None:
    lines: list[str] = []
    with GitHubStandIn.from_sample(samples.get("py-textkit"), tmp_path, fail_once=kind) as s:
        res = mine_github(s.full_name, base_url=s.base_url, log=lines.append, **FAST)
        statuses = [r["status"] for r in s.requests]
    assert statuses.count(429 if kind == "429" else 403) == 1
    assert [c.pr_number for c in res.candidates] == [3, 6]
    assert len(res.waits) == 1 and "waiting" in res.waits[0] and res.waits[0] in lines


def test_a_wait_longer_than_max_wait_stops_the_run(tmp_path: Path) -> None:
    sample = samples.get("py-textkit")
    with (GitHubStandIn.from_sample(sample, tmp_path, fail_once="secondary") as s,
          pytest.raises(RateLimitWait, match="longer than max_wait")):
        mine_github(s.full_name, base_url=s.base_url, max_wait=0.5, **FAST)


def test_remaining_requests_are_respected_before_they_run_out(tmp_path: Path) -> None:
    with GitHubStandIn.from_sample(samples.get("py-textkit"), tmp_path, rate_limit=12,
                                   window_s=1.0) as s:
        res = mine_github(s.full_name, base_url=s.base_url, reserve=6, **FAST)
        statuses = [r["status"] for r in s.requests]
    assert [c.pr_number for c in res.candidates] == [3, 6]
    assert any("requests left; waiting" in w for w in res.waits)
    assert statuses.count(403) <= 1  # the reserve keeps the miner ahead of the limit


def test_an_interrupted_run_resumes_to_the_same_result(textkit: GitHubStandIn, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    kw = {"base_url": textkit.base_url, **FAST}
    full = mine_github(textkit.full_name, **kw)
    state = tmp_path / "gh.state.jsonl"

    part = mine_github(textkit.full_name, state=state, limit=1, **kw)  # stopped by limit
    assert not part.complete and part.processed == 1

    real = gh_mod._examine
    calls = {"n": 0}

    def crash_on_second(*a, **k):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("injected crash")
        return real(*a, **k)

    monkeypatch.setattr(gh_mod, "_examine", crash_on_second)
    with pytest.raises(RuntimeError, match="injected"):
        mine_github(textkit.full_name, state=state, **kw)  # one more, then a crash
    monkeypatch.setattr(gh_mod, "_examine", real)

    n = len(textkit.requests)
    done = mine_github(textkit.full_name, state=state, **kw)
    assert done.complete and done.processed == len(full.rejected) + len(full.candidates)
    assert [c.model_dump() for c in done.candidates] == [c.model_dump() for c in full.candidates]
    assert [r.model_dump() for r in done.rejected] == [r.model_dump() for r in full.rejected]
    # the resumed run did not fetch the already-processed pull requests' diffs again
    assert sum("diff" in (r["accept"] or "") for r in textkit.requests[n:]) < sum(
        1 for c in full.candidates) + len(full.rejected)
    with pytest.raises(ValueError, match="other settings"):
        mine_github(textkit.full_name, state=state, max_files=3, **kw)


def test_require_issue_and_pagination(textkit: GitHubStandIn) -> None:
    res = mine_github(textkit.full_name, base_url=textkit.base_url, per_page=1,
                      require_issue=True, **FAST)
    assert [c.pr_number for c in res.candidates] == [3, 6]
    pulls_pages = [r for r in textkit.requests if r["path"].split("?")[0].endswith("/pulls")]
    assert len(pulls_pages) >= 4  # 4 pull requests, one a page, followed by Link headers


def test_standin_answers_like_github(textkit: GitHubStandIn) -> None:
    import requests

    base = f"{textkit.base_url}/repos/{textkit.full_name}"
    r = requests.get(f"{base}/pulls", params={"state": "closed", "per_page": 2}, timeout=10)
    assert r.status_code == 200 and len(r.json()) == 2 and 'rel="next"' in r.headers["Link"]
    assert "X-RateLimit-Remaining" in r.headers
    assert requests.get(f"{base}/issues/999", timeout=10).status_code == 404
    assert requests.get(f"{textkit.base_url}/repos/x/y", timeout=10).status_code == 404
    assert requests.post(f"{base}/pulls", timeout=10).status_code == 405
    d = requests.get(f"{base}/pulls/3", headers={"Accept": "application/vnd.github.v3.diff"},
                     timeout=10)
    assert d.text.startswith("diff --git ")
    files = requests.get(f"{base}/pulls/3/files", timeout=10).json()
    assert {f["filename"] for f in files} == {"src/textkit/core.py", "tests/test_core.py"}
    assert textkit.base_url.startswith("http://127.0.0.1:")


def test_parse_diff_handles_binary_renames_and_dash_lines() -> None:
    text = (
        "diff --git a/img.png b/img.png\nnew file mode 100644\nindex 0000000..1111111\n"
        "Binary files /dev/null and b/img.png differ\n"
        "diff --git a/old.py b/tests/new_test.py\nsimilarity index 90%\n"
        "rename from old.py\nrename to tests/new_test.py\n"
        "--- a/old.py\n+++ b/tests/new_test.py\n@@ -1,2 +1,2 @@\n--- x\n+++ y\n keep\n"
    )
    files = parse_diff(text)
    assert [(f.path, f.binary, f.added, f.deleted) for f in files] == [
        ("img.png", True, 0, 0), ("tests/new_test.py", False, 1, 1)]


def test_parse_diff_is_tolerant_and_reads_plain_diffs() -> None:
    """Through `envs.diffs` (unidiff). A part whose hunks do not read is still a file, named
    by its headers, with no counted lines (the hand parser counted what it found); a plain
    diff's files are files (the hand parser skipped all but "diff --git" parts)."""
    short = "diff --git a/src/a.py b/src/a.py\n--- a/src/a.py\n+++ b/src/a.py\n" \
            "@@ -1,3 +1,3 @@\n-x\n+y\n"
    quoted = 'diff --git "a/t\\303\\251st.py" "b/t\\303\\251st.py"\n' \
             '--- "a/t\\303\\251st.py"\n+++ "b/t\\303\\251st.py"\n@@ -1 +1 @@\n-a\n+b\n'
    files = parse_diff(short + quoted)
    assert [(f.path, f.added, f.deleted) for f in files] == [("src/a.py", 0, 0),
                                                              ("t\u00e9st.py", 1, 1)]
    assert files[0].section == short and files[1].section == quoted
    plain = "--- a/src/b.py\n+++ b/src/b.py\n@@ -1 +1 @@\n-a\n+b\n"
    assert [(f.path, f.added, f.deleted, f.section) for f in parse_diff(plain)] == [
        ("src/b.py", 1, 1, plain)]
    assert parse_diff("no diff here\n") == []


def test_find_repo_layouts(tmp_path: Path) -> None:
    (tmp_path / "a" / "b" / ".git").mkdir(parents=True)
    (tmp_path / "c__d.git").mkdir()
    (tmp_path / "c__d.git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert find_repo(tmp_path, "a/b") == tmp_path / "a" / "b"
    assert find_repo(tmp_path, "c/d") == tmp_path / "c__d.git"
    assert find_repo(tmp_path, "e/f") is None
