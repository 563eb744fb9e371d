"""Validation of mined candidates, in real containers, against what the samples planted.

Planted fixes verify with exactly the planted FAIL_TO_PASS; a fix whose test never fails is
rejected ``no_fail_to_pass``; a coin-toss test is recorded as flaky and never FAIL_TO_PASS;
a gold patch that breaks a passing test (made here from a real one) is ``gold_breaks_tests``;
patches that do not apply and a missing image have their own reasons.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from data import samples
from envs.config import _default_home
from envs.models import SWETask
from repolaunch.build import launch
from repolaunch.importer import files_under_test
from repolaunch.mine import mine
from repolaunch.validate import DETERMINISM_ENV, scoped_command, validate

pytestmark = pytest.mark.docker

# Env images live in the (shared) Docker engine; their spec files are keyed by the image's
# content-addressed tag, so isolated homes share them and builds stay cache hits.
SHARED_ENVS = Path(os.environ.get("ENVFACTORY_HOME") or _default_home()) / "envs"


def share_env_specs(home: Path) -> None:
    SHARED_ENVS.mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "envs").exists():
        (home / "envs").symlink_to(SHARED_ENVS, target_is_directory=True)


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def commit_shas(repo: Path) -> list[str]:
    """The sample's commits in order (index = `Planted.commit`)."""
    return git(repo, "rev-list", "--reverse", "--first-parent", "HEAD").split()


def planted_candidates(sample: samples.SampleRepo, repo: Path, candidates: list[SWETask]
                       ) -> list[tuple[samples.Planted, str, SWETask | None]]:
    """(planted, fix sha, the candidate mined from it or None) for every planted commit."""
    shas = commit_shas(repo)
    by_base = {c.base_commit: c for c in candidates}
    return [(p, shas[p.commit], by_base.get(shas[p.commit - 1])) for p in sample.planted]


@pytest.fixture()
def home(tmp_home: Path) -> Path:
    share_env_specs(tmp_home)
    return tmp_home


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("validate-samples")


def _prepare(name: str, written: Path, commit: int):
    """The sample written out, the candidate mined from planted commit `commit`, its env."""
    sample = samples.get(name)
    repo = written / name
    if not repo.exists():
        samples.write(sample, written)
    found = {p.commit: (p, c) for p, _, c in planted_candidates(sample, repo, mine(repo).candidates)}
    planted, task = found[commit]
    assert task is not None, f"{name}: planted commit {commit} was not mined"
    res = launch(repo, commit=task.base_commit, run_tests=False)
    assert res.ok and res.env is not None, res.failure
    return planted, task, res


@pytest.mark.parametrize(("name", "commit"), [("py-textkit", 2), ("c-strutil", 1)])
def test_planted_fix_verifies_with_exactly_the_planted_fail_to_pass(
        name, commit, written, home, docker_engine) -> None:
    planted, task, res = _prepare(name, written, commit)
    v = validate(task, res.env, per_test_command=res.plan.per_test_command)
    assert v.verified, (v.reason, v.detail)
    assert v.reason is None
    assert v.fail_to_pass == sorted(planted.fail_to_pass)
    assert set(planted.pass_to_pass) <= set(v.pass_to_pass)
    assert not v.flaky and not v.new_tests and not v.before_build_broken
    assert (v.fail_to_pass, v.pass_to_pass) == (v.task.FAIL_TO_PASS, v.task.PASS_TO_PASS)
    assert v.task.env_spec is not None and v.task.env_spec.checkout == task.base_commit
    assert v.task.env_spec.image == res.env.image
    # 2 + 3 suite runs, then 3 + 3 confirmations of the candidates
    sides = [(r.side, r.phase) for r in v.runs]
    assert sides.count(("before", "main")) == 2 and sides.count(("after", "main")) == 3
    assert sides.count(("before", "confirm")) == 3 and sides.count(("after", "confirm")) == 3
    assert all(r.counts["total"] > 0 and r.seconds > 0 for r in v.runs)


@pytest.mark.parametrize(("name", "commit"), [("py-textkit", 4), ("c-strutil", 2)])
def test_flaky_test_is_recorded_and_never_fail_to_pass(name, commit, written, home,
                                                       docker_engine) -> None:
    planted, task, res = _prepare(name, written, commit)
    assert planted.decoy == "flaky"
    # Enough runs that a coin-toss test shows both faces on each side (p(miss) < 1e-4).
    v = validate(task, res.env, runs_before=2, runs_after=3, confirm_runs=10)
    flaky_test = {"py-textkit": "tests/test_core.py::test_slugify_long_input_is_fast",
                  "c-strutil": "count_words_fuzz"}[name]
    assert flaky_test in v.flaky
    assert flaky_test not in v.fail_to_pass and flaky_test not in v.pass_to_pass
    assert not v.verified and v.reason == "no_fail_to_pass"
    assert flaky_test in v.detail


@pytest.mark.parametrize(("name", "commit"), [("ruby-roman", 2), ("go-inventory", 3)])
def test_fix_whose_test_never_fails_is_rejected(name, commit, written, home,
                                                docker_engine) -> None:
    planted, task, res = _prepare(name, written, commit)
    assert planted.decoy == "no_fail_to_pass"
    v = validate(task, res.env)
    assert not v.verified and v.reason == "no_fail_to_pass", (v.reason, v.detail)
    assert v.fail_to_pass == [] and v.pass_to_pass
    assert v.task.FAIL_TO_PASS == [] and v.task.env_spec is None  # not registered as such


def _breaking_patch(repo: Path, task: SWETask, tmp: Path) -> str:
    """The real fix plus a change that breaks slugify (which passes before)."""
    wt = tmp / "wt-break"
    git(repo, "worktree", "add", "-q", "--detach", str(wt), task.base_commit)
    (tmp / "fix.diff").write_text(task.patch)
    git(wt, "apply", str(tmp / "fix.diff"))
    core = wt / "src" / "textkit" / "core.py"
    core.write_text(core.read_text().replace(".strip(sep)", ".strip(sep).upper()"))
    return git(wt, "diff") + "\n"


def test_gold_patch_that_breaks_a_passing_test_is_rejected(written, home, tmp_path,
                                                           docker_engine) -> None:
    _, task, res = _prepare("py-textkit", written, 2)
    bad = task.model_copy(update={"patch": _breaking_patch(written / "py-textkit", task,
                                                           tmp_path)})
    v = validate(bad, res.env, runs_before=1, runs_after=1, confirm_runs=0)
    assert not v.verified and v.reason == "gold_breaks_tests"
    assert "tests/test_core.py::test_slugify_basic" in v.gold_breaks
    assert "test_slugify_basic" in v.detail
    # the planted target still went fail -> pass: it is the breakage that rejects it
    assert v.fail_to_pass == ["tests/test_core.py::test_truncate_narrow_width"]


def test_patches_that_do_not_apply_and_a_missing_image(written, home, docker_engine) -> None:
    _, task, res = _prepare("py-textkit", written, 2)
    junk = "diff --git a/nope.txt b/nope.txt\n--- a/nope.txt\n+++ b/nope.txt\n@@ -1 +1 @@\n-a\n+b\n"
    v = validate(task.model_copy(update={"test_patch": junk}), res.env, confirm_runs=0)
    assert (v.verified, v.reason) == (False, "test_patch_failed")
    assert len(v.runs) == 1
    v = validate(task.model_copy(update={"patch": junk}), res.env, confirm_runs=0)
    assert (v.verified, v.reason) == (False, "patch_failed")
    assert [r.side for r in v.runs] == ["before", "before", "after"]
    v = validate(task, res.env.model_copy(update={"image": None}))
    assert (v.verified, v.reason) == (False, "env_build_failed") and v.runs == []


def test_a_timeout_is_its_own_reason(written, home, docker_engine) -> None:
    _, task, res = _prepare("py-textkit", written, 2)
    slow = res.env.model_copy(update={"test_command": "sleep 30; " + res.env.test_command})
    v = validate(task, slow, runs_before=1, runs_after=1, timeout=2)
    assert (v.verified, v.reason) == (False, "timeout")


def test_a_suite_that_never_reports_is_a_broken_build(written, home, docker_engine) -> None:
    _, task, res = _prepare("py-textkit", written, 2)
    broken = res.env.model_copy(update={"test_command": "echo 'cannot build'; exit 2"})
    v = validate(task, broken, runs_before=2, runs_after=1, confirm_runs=0)
    assert (v.verified, v.reason) == (False, "env_build_failed")
    assert v.before_build_broken and all(r.build_broken for r in v.runs)


def test_determinism_variables_are_pinned_in_every_run(written, home, docker_engine) -> None:
    _, task, res = _prepare("py-textkit", written, 2)
    # Make the suite itself report the variables: a test that checks them.
    probe = res.env.model_copy(update={"test_command": (
        "cat > tests/test_pins.py <<'EOF'\nimport os\n\n\ndef test_pins():\n"
        + "".join(f"    assert os.environ[{k!r}] == {v!r}\n"
                  for k, v in DETERMINISM_ENV.items())
        + "EOF\n" + res.env.test_command)})
    v = validate(task, probe, runs_before=1, runs_after=1, confirm_runs=0)
    assert v.verified, v.detail
    assert "tests/test_pins.py::test_pins" in v.pass_to_pass
    assert {"TZ", "LC_ALL", "PYTHONHASHSEED", "ENVFACTORY_SEED"} <= set(DETERMINISM_ENV)



def _go_repo(root: Path) -> Path:
    """A Go module whose fix adds a function its new test calls: with only the test patch,
    the package does not compile, so every test "fails" before the fix."""
    repo = root / "gocalc"
    repo.mkdir(parents=True)
    files = {"go.mod": "module example.com/gocalc\n\ngo 1.19\n",
             "calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
             "calc_test.go": ("package calc\n\nimport \"testing\"\n\n"
                              "func TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n"
                              "\t\tt.Fatal(\"add\")\n\t}\n}\n\n"
                              "func TestAddZero(t *testing.T) {\n\tif Add(0, 0) != 0 {\n"
                              "\t\tt.Fatal(\"zero\")\n\t}\n}\n")}
    for k, v in files.items():
        (repo / k).write_text(v)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "calc: Add")
    (repo / "calc.go").write_text(files["calc.go"] + "\nfunc Sub(a, b int) int { return a - b }\n")
    (repo / "calc_test.go").write_text(files["calc_test.go"] + (
        "\nfunc TestSub(t *testing.T) {\n\tif Sub(5, 3) != 2 {\n\t\tt.Fatal(\"sub\")\n\t}\n}\n"))
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam",
        "Add Sub\n\nFixes #1")
    return repo


def test_a_test_patch_that_breaks_the_build_before_keeps_old_tests_pass_to_pass(
        tmp_path, home, docker_engine) -> None:
    repo = _go_repo(tmp_path)
    (task,) = mine(repo).candidates
    res = launch(repo, commit=task.base_commit, run_tests=False)
    assert res.ok and res.env is not None, res.failure
    v = validate(task, res.env, per_test_command=res.plan.per_test_command, confirm_runs=1)
    assert v.verified and v.before_build_broken, (v.reason, v.detail)
    # only the test the patch is about; the tests that passed at the base stay PASS_TO_PASS
    assert v.fail_to_pass == ["TestSub"], v.fail_to_pass
    assert {"TestAdd", "TestAddZero"} <= set(v.pass_to_pass)
    assert [r.side for r in v.runs].count("base") == 1
    # Graded: gold resolves it; an empty patch leaves the suite unbuildable, which is the
    # task's failure (graded, or MODEL), never the environment's (BUILD_FAILED).
    from harness.evaluate import evaluate

    tasks = {v.task.instance_id: v.task}
    gold = evaluate("gold", tasks=tasks, run_id="gold", runs_dir=tmp_path / "runs")
    empty = evaluate("empty", tasks=tasks, run_id="empty", runs_dir=tmp_path / "runs")
    assert gold.resolved_instances == 1, gold.instances
    (inst,) = empty.instances
    assert not inst["resolved"] and inst["failure_kind"] in ("NONE", "MODEL"), inst


def test_named_in_finds_a_test_name_on_changed_lines_and_hunk_headers() -> None:
    from repolaunch.validate import _named_in

    patch = ("diff --git a/x_test.go b/x_test.go\n--- a/x_test.go\n+++ b/x_test.go\n"
             "@@ -1,3 +1,4 @@ func TestOld(t *testing.T) {\n-\tcheck(t, 1)\n+\tcheck(t, 2)\n"
             "@@ -9,3 +9,4 @@ func TestAbove(t *testing.T) {\n+func TestNew(t *testing.T) {}\n")
    assert _named_in("pkg/TestNew", patch) and _named_in("TestOld", patch)
    assert not _named_in("TestNewer", patch) and not _named_in("TestOther", patch)
    assert not _named_in("TestAbove", patch)  # a pure addition after it
    assert _named_in("TestNew/0", patch) and _named_in("TestNew/some_case", patch)
    assert not _named_in("FuzzOld/seed#0", patch) and not _named_in("TestOther/0", patch)
    assert _named_in("tests/t.py::test_new[1.5]", "+def test_new(x):\n")
    assert not _named_in("tests/t.py::test_old", "+def test_new(x):\n")
    # a Go case is named by its whole name as a string in the source, not by its first word
    data = '+1 + foo atan2 bar\n+\t{input: "foo[7m]", fail: true},\n'
    assert not _named_in("TestParseExpressions/foo[5m1]", data)
    assert not _named_in("TestParseExpressions/foo", data)
    assert _named_in("TestParseExpressions/foo[7m]", data)
    assert _named_in("TestLex/a_(b)", '+\t{name: "a (b)"},\n')
    assert _named_in("TestLex/group/new_case", '+\tt.Run(`new case`, f)\n')
    # a case with parameters in other forms: its whole name, or its test function
    assert not _named_in("renders (with props)", "+  expect(renders).toBe(1)\n")
    assert _named_in("renders (with props)", "+it('renders (with props)', () => {\n")


def test_a_cache_hit_on_a_newer_commit_gets_its_history(tmp_path, home, docker_engine) -> None:
    from envs.instance import open_instance

    repo = _go_repo(tmp_path)
    first = launch(repo, run_tests=False)
    assert first.ok and first.env is not None
    (repo / "NOTES.md").write_text("a commit the env image has never seen\n")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "add", "NOTES.md")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "notes")
    head = git(repo, "rev-parse", "HEAD")
    again = launch(repo, commit=head, run_tests=False)
    assert again.ok and again.cache_hit and again.env is not None, again.failure
    with open_instance(again.env) as sb:  # the instance checks the new commit out
        assert sb.exec("git rev-parse HEAD").stdout.strip() == head
        assert sb.exec("cat NOTES.md").exit_code == 0


def test_swebench_reading_runs_the_test_patch_files_and_keeps_every_log(
        written, home, tmp_path, docker_engine) -> None:
    """SWE-bench's way: the test patch's files only (the verified task's test command is the
    scoped one), one run a side, then the candidates one by one; every run's output kept."""
    planted, task, res = _prepare("py-textkit", written, 2)
    files = files_under_test(task.test_patch)
    logs = tmp_path / "logs"
    v = validate(task, res.env, per_test_command=res.plan.per_test_command, scope=files,
                 scope_command=res.plan.scope_command,
                 reading="swebench", runs_before=1, runs_after=1, confirm_runs=1,
                 log_dir=logs)
    assert v.verified, (v.reason, v.detail)
    assert v.fail_to_pass == sorted(planted.fail_to_pass)
    assert v.pass_to_pass and all(t.split("::")[0] in files for t in v.pass_to_pass)
    assert v.task.env_spec is not None
    assert v.task.env_spec.test_command == scoped_command(res.plan.per_test_command, files)
    assert [(r.side, r.phase, r.per_test) for r in v.runs] == [
        ("before", "main", False), ("after", "main", False),
        ("before", "confirm", True), ("after", "confirm", True)]
    assert sorted(p.name for p in logs.iterdir()) == [
        "after-confirm-1.log", "after-main-1.log", "before-confirm-1.log",
        "before-main-1.log"]
    assert (logs / "before-main-1.log").read_text().startswith(f"$ {v.task.env_spec.test_command}")


def test_swebench_reading_records_a_test_the_fix_breaks_without_rejecting(
        written, home, tmp_path, docker_engine) -> None:
    _, task, res = _prepare("py-textkit", written, 2)
    bad = task.model_copy(update={"patch": _breaking_patch(written / "py-textkit", task,
                                                           tmp_path)})
    v = validate(bad, res.env, reading="swebench", runs_before=1, runs_after=1,
                 confirm_runs=0)
    assert v.verified and "tests/test_core.py::test_slugify_basic" in v.gold_breaks
    assert "tests/test_core.py::test_slugify_basic" not in v.pass_to_pass
    assert "broken by the fix" in v.detail
