"""The local git miner, as a specification.

Synthetic repositories in tmp_path for each commit style (a pull-request merge, a squash
commit ending in ``(#N)``, a plain commit), the issue-link forms SWE-bench accepts, the
test-path classifier per language (a table, with the paths a substring rule gets wrong),
every skip reason, kind labels, problem statements and hints from an issues export, and
resuming an interrupted run. Then every registered sample repository: each planted task is
found with its base commit and issues, each docs-only / tests-only decoy is rejected with
exactly that reason, and each planted task's test patch and code patch apply, in that
order, to a worktree at the base commit and rebuild the fix commit's tree.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from data import samples
from envs.models import Language, TaskKind
from repolaunch.mine import (
    REASONS,
    FileRole,
    IssueRecord,
    MineResult,
    classify_path,
    label_kind,
    linked_issues,
    load_issues,
    mine,
    pr_number_of,
)

K = TaskKind
DATE = "2024-03-01T12:00:00+00:00"


# --------------------------------------------------------------------------- helpers


def git(cwd: Path, *args: str, date: str = DATE) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date,
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, f"git {args}: {proc.stderr}"
    return proc.stdout.strip()


class Repo:
    """A throwaway repository: `commit(files, message)` returns the new sha."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True)
        git(root, "init", "-q", "-b", "main")
        git(root, "config", "commit.gpgsign", "false")
        self.commit({
            "pyproject.toml": "[project]\nname = 'calc'\n",
            "calc/__init__.py": "",
            "calc/ops.py": "def add(a, b):\n    return a - b\n",
            "tests/test_ops.py": "from calc.ops import add\n\n\ndef test_add():\n    assert add(1, 1) == 2\n",
            "README.md": "# calc\n",
        }, "Initial calc")

    def commit(self, files: dict[str, str | bytes | None], message: str,
               date: str = DATE, allow_empty: bool = False) -> str:
        for rel, content in files.items():
            path = self.root / rel
            if content is None:
                path.unlink()
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content)
        git(self.root, "add", "-A")
        extra = ["--allow-empty"] if allow_empty else []
        git(self.root, "commit", "-q", *extra, "-m", message, date=date)
        return self.head()

    def head(self) -> str:
        return git(self.root, "rev-parse", "HEAD")

    def fix(self, message: str, date: str = DATE, n: int = 1) -> str:
        """A code change plus a test change: the shape of an issue fix."""
        return self.commit({
            "calc/ops.py": f"def add(a, b):\n    return a + b  # v{n}\n",
            "tests/test_ops.py": f"from calc.ops import add\n\n\ndef test_add():\n    assert add(1, 1) == 2\n\n\ndef test_add_{n}():\n    assert add(2, {n}) == {2 + n}\n",
        }, message, date=date)


@pytest.fixture()
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path / "calc")


def only(result: MineResult):
    assert len(result.candidates) == 1, (result.candidates, result.rejected)
    return result.candidates[0]


def apply_check(root: Path, base: str, *patches: str, tmp: Path) -> Path:
    """Apply the patches in order, each checked first, in a fresh worktree at base."""
    wt = tmp / f"wt-{base[:7]}-{len(list(tmp.glob('wt-*')))}"
    git(root, "worktree", "add", "-q", "--detach", str(wt), base)
    for i, patch in enumerate(patches):
        pf = tmp / f"{wt.name}-{i}.diff"
        pf.write_text(patch)
        proc = subprocess.run(["git", "apply", "--check", str(pf)], cwd=wt,
                              capture_output=True, text=True)
        assert proc.returncode == 0, f"patch {i} does not apply: {proc.stderr}\n{patch}"
        git(wt, "apply", "--index", str(pf))
    return wt


# --------------------------------------------------------------------------- commit styles


def test_plain_commit_is_a_candidate_with_its_parent_as_base(repo: Repo) -> None:
    base = repo.head()
    sha = repo.fix("Fix add subtracting instead of adding\n\nIt returned a - b. Fixes #3")
    task = only(mine(repo.root))
    assert task.base_commit == base
    assert task.instance_id == f"local__calc-{sha[:7]}"
    assert task.repo == "local/calc"
    assert task.pr_number is None
    assert task.issue_numbers == [3]
    assert task.kind is K.BUG_FIX
    assert task.language is Language.PYTHON
    assert "calc/ops.py" in task.patch and "tests/" not in task.patch
    assert "tests/test_ops.py" in task.test_patch and "calc/ops.py" not in task.test_patch
    assert task.problem_statement == (
        "Fix add subtracting instead of adding\nIt returned a - b. Fixes #3")
    assert task.hints_text == ""
    assert task.created_at.startswith("2024-03-01T12:00:00")
    assert task.FAIL_TO_PASS == [] and task.PASS_TO_PASS == []  # validation's job


def test_squash_commit_takes_the_pr_number_from_its_title(repo: Repo) -> None:
    repo.fix("Fix add for negative numbers (#42)\n\nCloses #41")
    task = only(mine(repo.root))
    assert task.pr_number == 42
    assert task.instance_id == "local__calc-42"
    assert task.issue_numbers == [41]  # "(#42)" has no keyword: the PR, not an issue


def test_merge_commit_is_one_change_from_first_parent_to_merge(repo: Repo) -> None:
    base = repo.head()
    git(repo.root, "checkout", "-q", "-b", "dev/fix-add")
    repo.commit({"calc/ops.py": "def add(a, b):\n    return a + b\n"}, "Repair add\n\ncloses #3")
    repo.commit({"tests/test_ops.py": "from calc.ops import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"},
                "Test add with 2 + 2")
    git(repo.root, "checkout", "-q", "main")
    repo.commit({"README.md": "# calc\n\nAdds numbers.\n"}, "Describe calc")
    main_tip = repo.head()
    git(repo.root, "merge", "-q", "--no-ff", "dev/fix-add", "-m",
        "Merge pull request #12 from dev/fix-add\n\nMake add add")
    result = mine(repo.root)
    task = only(result)
    # the branch's own commits are part of the pull request, not changes of their own
    assert result.processed == 3  # initial, README, merge
    assert task.base_commit == main_tip != base
    assert task.pr_number == 12 and task.instance_id == "local__calc-12"
    assert task.issue_numbers == [3]  # from a merged commit's message
    assert "return a + b" in task.patch and "README" not in task.patch
    assert "2 + 2" not in task.patch and "add(2, 2) == 4" in task.test_patch
    assert task.problem_statement == "Make add add\n"


def test_merge_without_change_is_rejected(repo: Repo) -> None:
    git(repo.root, "checkout", "-q", "-b", "side")
    repo.fix("Fix add")
    git(repo.root, "checkout", "-q", "main")
    git(repo.root, "merge", "-q", "-s", "ours", "side", "-m", "Merge pull request #5 from x/side")
    result = mine(repo.root)
    (rej,) = [r for r in result.rejected if r.reason != "root_commit"]
    assert rej.reason == "merge_without_change" and rej.pr_number == 5


def test_repo_name_comes_from_origin(repo: Repo) -> None:
    git(repo.root, "remote", "add", "origin", "git@github.com:Acme/calc-lib.git")
    repo.fix("Fix add (#8)\n\nFixes https://github.com/acme/calc-lib/issues/7\n"
             "See also: fixes https://github.com/other/repo/issues/99")
    task = only(mine(repo.root))
    assert task.repo == "Acme/calc-lib"
    assert task.instance_id == "Acme__calc-lib-8"
    assert task.issue_numbers == [7]  # another repository's issue is not this one's


# --------------------------------------------------------------------------- issue links


@pytest.mark.parametrize(("text", "expected"), [
    ("closes #3", [3]),
    ("Fixes https://github.com/o/r/issues/7", [7]),
    ("resolved #9", [9]),
    ("FIXES #10 and Resolves #11", [10, 11]),
    ("Closed: #12", [12]),
    ("fix #1, close #1", [1]),
    ("Fixed #2 (#4)", [2]),
    ("Fix the parser (#4)", []),  # a PR reference, not a link
    ("see #5, related to #6", []),  # no keyword
    ("fixing #5", []),  # not one of SWE-bench's keywords
    ("prefixes #5", []),  # the keyword must be a whole word
    ("<!-- fixes #8 -->\nA template comment", []),
    ("fixes http://github.com/o/r/issues/13", [13]),
    ("fixes https://github.com/o/r/pull/14", []),
])
def test_issue_links_follow_swebench(text: str, expected: list[int]) -> None:
    assert linked_issues(text) == expected


def test_issue_urls_of_other_repositories_do_not_count() -> None:
    text = "fixes https://github.com/o/r/issues/1 fixes https://github.com/x/y/issues/2 fixes #3"
    assert linked_issues(text, "O/R") == [1, 3]
    assert linked_issues(text, "local/r") == [1, 2, 3]


@pytest.mark.parametrize(("message", "pr"), [
    ("Merge pull request #12 from a/b\n\nTitle", 12),
    ("Fix it (#7)", 7),
    ("Fix it (#7)\n\nbody (#9)", 7),
    ("Fix #7 in the title", None),
    ("Merge branch 'x'", None),
    ("", None),
])
def test_pr_number(message: str, pr: int | None) -> None:
    assert pr_number_of(message) == pr


# --------------------------------------------------------------------------- path classifier

T, C, D = FileRole.TEST, FileRole.CODE, FileRole.DOCS


@pytest.mark.parametrize(("path", "role"), [
    # Python
    ("tests/test_core.py", T), ("test/unit/helpers.py", T), ("pkg/test_io.py", T),
    ("pkg/io_test.py", T), ("conftest.py", T), ("pkg/conftest.py", T), ("app/tests.py", T),
    ("src/latest.py", C), ("contest.py", C), ("pkg/attestation.py", C), ("pkg/testimony.py", C),
    ("pkg/testing.py", C), ("pytest_plugin.py", C), ("src/pkg/protest/core.py", C),
    ("pkg/testing/utils.py", T),
    # Go
    ("stock_test.go", T), ("test.go", C), ("internal/report/report_test.go", T), ("testdata/in.golden", T),
    ("pkg/parse/testdata/case1.txt", T), ("internal/testutil/fake.go", T), ("latest.go", C),
    ("cmd/contest/main.go", C),
    # Java / Kotlin
    ("src/test/java/org/x/MoneyTest.java", T), ("src/main/java/org/x/Money.java", C),
    ("core/src/main/java/org/x/Latest.java", C), ("core/src/test/resources/data.json", T),
    ("src/org/x/MoneyTests.java", T), ("src/org/x/MoneyIT.java", T),
    ("src/org/x/TestMoney.java", T), ("src/org/x/Testable.java", C),
    ("src/integrationTest/java/X.java", T), ("src/main/kotlin/x/FooTest.kt", T),
    # JavaScript / TypeScript
    ("src/cart.test.js", T), ("src/qs.spec.js", T), ("src/__tests__/cart.js", T),
    ("src/range.spec.ts", T), ("src/App.test.tsx", T), ("src/App.test.jsx", T),
    ("src/__mocks__/fs.js", T), ("src/contest.ts", C), ("src/testimonials.tsx", C),
    ("e2e/login.js", T), ("src/specification.js", C), ("test.js", T), ("index.test-d.ts", T),
    ("test.ts", T), ("latest.js", C),
    # PHP
    ("tests/MoneyTest.php", T), ("test/SlugTest.php", T), ("tests/Unit/Deep/ATest.php", T),
    ("src/Money.php", C), ("src/Latest.php", C), ("tests/fixtures/a.php", T),
    # Ruby
    ("spec/wordwrap_spec.rb", T), ("test/roman_test.rb", T), ("lib/foo_spec.rb", T),
    ("test/test_helper.rb", T), ("lib/roman.rb", C), ("lib/contest.rb", C),
    # C / C++
    ("tests/test_parse.c", T), ("src/parse_test.cc", T), ("src/parse_unittest.cc", T),
    ("src/test_util.cpp", T), ("src/latest.c", C), ("src/geom.cpp", C),
    ("include/geom.h", C), ("tests/CMakeLists.txt", T), ("src/vec_test.cpp", T),
    # docs
    ("README.md", D), ("docs/format.md", D), ("docs/conf.py", D), ("CHANGELOG", D),
    ("CHANGELOG.rst", D), ("NEWS.txt", D), ("notes.txt", D), ("LICENSE", D),
    ("doc/api/index.rst", D), ("pkg/README", D), ("src/guide.adoc", D),
    # docs under a test directory are what the tests read: fixtures
    ("tests/fixtures/sample.md", T), ("spec/fixtures/README.md", T),
    # code that looks like docs or tests to a substring rule
    ("CMakeLists.txt", C), ("requirements.txt", C), ("requirements-dev.txt", C),
    ("pkg/data.txt", C), (".github/workflows/test.yml", C), ("Makefile", C),
    ("package.json", C), ("scripts/run_tests.sh", C),
])
def test_classify_path(path: str, role: FileRole) -> None:
    assert classify_path(path) is role


# --------------------------------------------------------------------------- skip reasons


def reasons(result: MineResult) -> list[str]:
    return [r.reason for r in result.rejected]


def test_every_skip_reason(repo: Repo) -> None:
    shas = {}
    shas["empty"] = repo.commit({}, "Nothing to see", allow_empty=True)
    shas["binary_only"] = repo.commit({"calc/logo.png": b"\x89PNG\0\0\x01\x02"}, "Add a logo")
    shas["docs_only"] = repo.commit({"README.md": "# calc\n\nAdds.\n", "docs/x.md": "x\n"},
                                    "Document (#2)\n\nFixes #1")
    shas["tests_only"] = repo.commit({"tests/test_more.py": "def test_x():\n    pass\n"},
                                     "More tests")
    shas["no_tests"] = repo.commit({"calc/ops.py": "def add(a, b):\n    return b + a\n"},
                                   "Fix add ordering")
    result = mine(repo.root)
    got = {r.sha: r for r in result.rejected}
    for reason, sha in shas.items():
        assert got[sha].reason == reason, got[sha]
        assert got[sha].detail and "\n" not in got[sha].detail
    assert got[shas["docs_only"]].issue_numbers == [1] and got[shas["docs_only"]].pr_number == 2
    assert result.stats == {"candidate": 0, "binary_only": 1, "docs_only": 1, "empty": 1,
                            "no_tests": 1, "root_commit": 1, "tests_only": 1}
    assert set(result.stats) - {"candidate"} <= set(REASONS)


def test_oversized_by_files_and_by_lines(repo: Repo) -> None:
    wide = repo.commit({**{f"calc/m{i}.py": "x = 1\n" for i in range(4)},
                        "tests/test_m.py": "def test_m():\n    pass\n"}, "Add modules")
    long = repo.commit({"calc/big.py": "y = 2\n" * 40, "tests/test_big.py": "def test_b():\n    pass\n"},
                       "Add big")
    got = mine(repo.root, max_files=4, max_lines=30).rejected_by_sha()
    assert got[wide].reason == "oversized" and "max_files" in got[wide].detail
    assert got[long].reason == "oversized" and "max_lines" in got[long].detail
    assert {t.base_commit for t in mine(repo.root).candidates} >= {wide}  # fine by default


def test_binary_files_stay_out_of_the_patches(repo: Repo, tmp_path: Path) -> None:
    base = repo.head()
    repo.commit({"calc/ops.py": "def add(a, b):\n    return a + b\n",
                 "calc/icon.bin": b"\0\1\2\3",
                 "tests/test_ops.py": "def test_add():\n    assert 1 + 1 == 2\n"}, "Fix add")
    task = only(mine(repo.root))
    assert "icon.bin" not in task.patch + task.test_patch
    apply_check(repo.root, base, task.test_patch, task.patch, tmp=tmp_path)


def test_docs_changed_with_code_go_to_the_patch(repo: Repo, tmp_path: Path) -> None:
    base = repo.head()
    repo.commit({"calc/ops.py": "def add(a, b):\n    return a + b\n", "CHANGELOG.md": "- fix\n",
                 "tests/test_ops.py": "def test_add():\n    assert 1 + 1 == 2\n"}, "Fix add")
    task = only(mine(repo.root))
    assert "CHANGELOG.md" in task.patch
    wt = apply_check(repo.root, base, task.test_patch, task.patch, tmp=tmp_path)
    assert git(wt, "diff", "--cached", "--stat", repo.head()) == ""


def test_deleted_and_added_files_apply(repo: Repo, tmp_path: Path) -> None:
    base = repo.head()
    repo.commit({"calc/ops.py": None, "calc/arith.py": "def add(a, b):\n    return a + b\n",
                 "tests/test_ops.py": None, "tests/test_arith.py": "def test_a():\n    pass\n"},
                "Move ops to arith and fix add")
    task = only(mine(repo.root))
    wt = apply_check(repo.root, base, task.test_patch, task.patch, tmp=tmp_path)
    assert git(wt, "diff", "--cached", "--stat", repo.head()) == ""


# --------------------------------------------------------------------------- kind labels


@pytest.mark.parametrize(("title", "body", "kw", "kind"), [
    ("Fix overlaps() for touching rectangles", "", {}, K.BUG_FIX),
    ("Crash on empty input", "", {}, K.BUG_FIX),
    ("Wrong total for empty carts", "", {}, K.BUG_FIX),
    ("Avoid regression in parse", "", {}, K.BUG_FIX),
    ("Add sales tax", "", {}, K.FEATURE),
    ("Support repeated bracket keys as arrays", "", {}, K.FEATURE),
    ("Implement TtlLRU", "", {}, K.FEATURE),
    ("Introduce a config file", "", {}, K.FEATURE),
    ("Refactor cartTotal into map and reduce", "", {}, K.REFACTOR),
    ("Rename Money.amt to amount", "", {}, K.REFACTOR),
    ("Move the unit table to units.go", "", {}, K.REFACTOR),
    ("Extract an isEmpty helper", "", {}, K.REFACTOR),
    ("Simplify the tokenizer", "", {}, K.REFACTOR),
    ("Cleanup of the parser", "", {}, K.REFACTOR),
    ("Move to the new API", "", {}, K.REFACTOR),  # "new" alone is no behaviour word
    ("Refactor the parser", "This also fixes a crash on empty input.", {}, K.BUG_FIX),
    ("Split the reader", "and add streaming support", {}, K.FEATURE),
    # a link keyword is not a description; an issue + code + tests still leans bug_fix
    ("Refactor Slugify internals (#8)", "Closes #7", {"has_issue": True}, K.REFACTOR),
    ("Treat tabs as word separators (#4)", "Fixes #3",
     {"has_issue": True, "has_tests": True}, K.BUG_FIX),
    ("Treat tabs as word separators", "", {"has_tests": True}, K.OTHER),
    ("Handle tabs", "", {"issue_titles": ["count_words is wrong for tabs"]}, K.BUG_FIX),
    ("Bump version", "", {}, K.OTHER),
    ("New option --strict", "", {}, K.FEATURE),
    # identifiers are not words: `add()` / `fix_up` name code
    ("Speed up add()", "", {}, K.OTHER),
    ("Rename `fix_input` to `clean_input`", "", {}, K.REFACTOR),
])
def test_label_kind(title: str, body: str, kw: dict, kind: TaskKind) -> None:
    assert label_kind(title, body, **kw) is kind


def test_kind_labels_through_the_miner(repo: Repo) -> None:
    repo.fix("Add an add_many helper", n=1)
    repo.fix("Simplify ops.py", n=2)
    repo.fix("Speed up add() (#4)\n\nFixes #3", n=3)
    kinds = [t.kind for t in mine(repo.root).candidates]
    assert kinds == [K.FEATURE, K.REFACTOR, K.BUG_FIX]


# --------------------------------------------------------------------------- issues export


def write_issues(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_problem_statement_and_hints_from_an_issues_file(repo: Repo, tmp_path: Path) -> None:
    repo.fix("Fix add (#4)\n\nFixes #3", date="2024-03-10T00:00:00+00:00")
    issues = write_issues(tmp_path / "issues.jsonl", [
        {"number": 3, "title": "add() subtracts", "body": "add(1, 1) is 0.",
         "created_at": "2024-03-01T00:00:00Z",
         "comments": [
             {"body": "Confirmed on main.", "created_at": "2024-03-02T00:00:00Z"},
             {"body": "Probably ops.py line 2.", "created_at": "2024-03-09T23:59:59+00:00"},
             {"body": "Fixed by #4, thanks!", "created_at": "2024-03-11T00:00:00Z"},
         ]},
        {"number": 99, "title": "unrelated", "body": "", "comments": []},
    ])
    task = only(mine(repo.root, issues=issues))
    assert task.problem_statement == "add() subtracts\nadd(1, 1) is 0."
    assert task.hints_text == "Confirmed on main.\nProbably ops.py line 2."  # not the later one


def test_issues_as_a_dict_with_plain_string_comments(repo: Repo) -> None:
    repo.fix("Fix add\n\nresolves #1, closes #2")
    records = {1: IssueRecord.model_validate({"number": 1, "title": "A", "body": "a",
                                              "comments": ["no date, so no hint"]}),
               2: IssueRecord(number=2, title="B", body=None)}
    task = only(mine(repo.root, issues=records))
    assert task.issue_numbers == [1, 2]
    assert task.problem_statement == "A\na\n\nB\n"
    assert task.hints_text == ""


def test_an_issue_missing_from_the_file_falls_back_to_the_message(repo: Repo, tmp_path: Path) -> None:
    repo.fix("Fix add\n\nFixes #5")
    issues = write_issues(tmp_path / "i.jsonl", [{"number": 1, "title": "x", "body": "y"}])
    assert only(mine(repo.root, issues=issues)).problem_statement == "Fix add\nFixes #5"


def test_load_issues_accepts_jsonl_and_a_json_array(tmp_path: Path) -> None:
    rows = [{"number": 7, "title": "t", "body": "b", "comments": ["c"], "extra": 1}]
    a = load_issues(write_issues(tmp_path / "a.jsonl", rows))
    (tmp_path / "b.json").write_text(json.dumps(rows))
    b = load_issues(tmp_path / "b.json")
    assert a == b and a[7].comments[0].body == "c" and a[7].comments[0].created_at is None


# --------------------------------------------------------------------------- since, resume


def test_since_a_revision_or_a_date(repo: Repo) -> None:
    first = repo.fix("Fix one", date="2024-01-01T00:00:00+00:00", n=1)
    repo.fix("Fix two", date="2024-06-01T00:00:00+00:00", n=2)
    assert len(mine(repo.root).candidates) == 2
    assert [t.base_commit for t in mine(repo.root, since=first).candidates] == [first]
    assert [t.base_commit for t in mine(repo.root, since="2024-05-01").candidates] == [first]


def test_interrupted_run_resumes_where_it_stopped(repo: Repo, tmp_path: Path) -> None:
    for n in range(1, 5):
        repo.fix(f"Fix add case {n} (#{10 + n})\n\nFixes #{n}", n=n)
        repo.commit({"README.md": f"# calc {n}\n"}, f"Docs {n}")
    full = mine(repo.root)
    state = tmp_path / "state.jsonl"
    part = mine(repo.root, state=state, limit=3)
    assert not part.complete and part.processed == 3
    assert part.last_sha == samples.commit_shas(repo.root)[2]
    # a torn last line (killed mid-write) is dropped, and that commit is mined again
    with state.open("a") as fh:
        fh.write('{"type": "candidate", "sha": "abc')
    again = mine(repo.root, state=state, limit=2)
    assert again.processed == 5 and not again.complete
    rest = mine(repo.root, state=state)
    assert rest.complete and rest.processed == full.processed == 9
    assert rest.candidates == full.candidates
    assert rest.rejected == full.rejected
    # nothing new: a finished state is a no-op
    assert mine(repo.root, state=state) == rest


def test_resume_refuses_a_state_file_from_other_settings(repo: Repo, tmp_path: Path) -> None:
    state = tmp_path / "state.jsonl"
    mine(repo.root, state=state)
    with pytest.raises(ValueError, match="other settings"):
        mine(repo.root, state=state, max_files=3)


# --------------------------------------------------------------------------- sample repositories

SAMPLES = samples.names()
# Refactor decoys whose commit message carries no refactor word: reported, labelled "other".
AMBIGUOUS_REFACTOR = {("java-roman", 2)}  # "Look roman digits up in a map"


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory):
    cache: dict[str, tuple[samples.SampleRepo, Path, list[str], MineResult]] = {}

    def get(name: str):
        if name not in cache:
            spec = samples.get(name)
            root = samples.write(spec, tmp_path_factory.mktemp(name))
            issues = {i.number: IssueRecord(number=i.number, title=i.title, body=i.body,
                                            comments=[{"body": c} for c in i.comments],
                                            created_at=i.created_at) for i in spec.issues}
            cache[name] = (spec, root, samples.commit_shas(root), mine(root, issues=issues))
        return cache[name]

    return get


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_planted_tasks_are_candidates(name: str, mined, tmp_path: Path) -> None:
    spec, root, shas, result = mined(name)
    by_sha = {t.base_commit: t for t in result.candidates}
    for p in spec.planted:
        if p.decoy is not None:
            continue
        task = by_sha.get(shas[p.commit - 1])
        assert task is not None, (
            f"{name}: planted task at commit {p.commit} not found: "
            f"{result.rejected_by_sha().get(shas[p.commit])}")
        assert task.base_commit == shas[p.commit - 1]
        assert task.issue_numbers == list(p.issues)
        assert task.kind is p.kind
        assert task.language is spec.language
        issue = {i.number: i for i in spec.issues}[p.issues[0]] if p.issues else None
        if issue is not None:
            assert task.problem_statement.startswith(f"{issue.title}\n{issue.body}")
        # the test patch alone, then the code patch, rebuild the fix commit's tree
        wt = apply_check(root, task.base_commit, task.test_patch, task.patch, tmp=tmp_path)
        assert git(wt, "diff", "--cached", "--stat", shas[p.commit]) == ""


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_decoys(name: str, mined) -> None:
    spec, _root, shas, result = mined(name)
    rejected = result.rejected_by_sha()
    candidates = {t.base_commit: t for t in result.candidates}
    for p in spec.planted:
        sha = shas[p.commit]
        if p.decoy in ("docs_only", "tests_only"):
            assert sha in rejected and rejected[sha].reason == p.decoy, (name, p)
            assert rejected[sha].issue_numbers == list(p.issues)
        elif p.decoy == "refactor":
            # still a candidate (validation rejects it) or, with no test change, no_tests
            task = candidates.get(shas[p.commit - 1])
            kind = task.kind if task is not None else rejected[sha].kind
            assert task is not None or rejected[sha].reason == "no_tests", (name, p)
            expected = K.OTHER if (name, p.commit) in AMBIGUOUS_REFACTOR else K.REFACTOR
            assert kind is expected, (name, p.commit, kind)
        elif p.decoy in ("no_fail_to_pass", "flaky"):
            task = candidates.get(shas[p.commit - 1])
            assert task is not None, (name, p, rejected.get(sha))
            assert task.issue_numbers == list(p.issues)


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_candidate_patches_apply(name: str, mined, tmp_path: Path) -> None:
    """Every candidate, planted or not, is a test patch and a code patch that apply."""
    _spec, root, _shas, result = mined(name)
    assert result.complete and result.processed == len(_shas)
    ids = [t.instance_id for t in result.candidates]
    assert len(ids) == len(set(ids))
    for task in result.candidates:
        assert task.patch and task.test_patch
        apply_check(root, task.base_commit, task.test_patch, task.patch, tmp=tmp_path)
