"""The one verifier: the same code gets the same verdict through `envfactory eval`, an RL
episode, validation and synth's gates, on a SWE task and a terminal task; and no flow keeps
a copy of its parts."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from data import eval_samples
from envs.api import ApplyPatch, Shell, WriteFile, make
from envs.models import FailureKind, SWETask
from envs.pool import Pool
from envs.verify import diff_paths, grading_diff, workdir_of
from harness.evaluate import Prediction, evaluate
from repolaunch.validate import validate
from synth.verify import trial
from tests.envs.test_api import terminal_task

ROOT = Path(__file__).resolve().parents[2]
# What a prediction that games the hidden tests looks like: it rewrites the test file the
# test patch is about so that everything passes, and fixes nothing.
GAMED_TEST = "def test_above():\n    pass\n"


def test_diff_paths_and_workdir():
    patch = ("diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n"
             "diff --git a/old.py b/new.py\nrename from old.py\nrename to new.py\n")
    assert diff_paths(patch) == ["a.py", "new.py", "old.py"]
    assert workdir_of("FROM x\nWORKDIR /a\nRUN true\nworkdir /app\n") == "/app"
    assert workdir_of("FROM x\n") == "/"


def test_diff_paths_read_names_with_spaces_and_quotes():
    """`envs.diffs` (unidiff): the hand regex wanted `a/\\S+ b/\\S+` and named neither."""
    patch = ("diff --git a/my file.py b/my file.py\n--- a/my file.py\t\n+++ b/my file.py\t\n"
             "@@ -1 +1 @@\n-a\n+b\n"
             'diff --git "a/t\\303\\251st.py" "b/t\\303\\251st.py"\n'
             '--- "a/t\\303\\251st.py"\n+++ "b/t\\303\\251st.py"\n@@ -1 +1 @@\n-a\n+b\n')
    assert diff_paths(patch) == ["my file.py", "t\u00e9st.py"]
    # tolerant, as before: a part whose hunks do not read is named by its header
    assert diff_paths("diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,3 +1 @@\n") \
        == ["x.py"]


def test_grading_diff_drops_test_files_whatever_their_names():
    """A test file with a space in its name was graded (the hand regex did not name it, and
    an unnamed section was kept); now every file is named and judged."""
    def part(path: str) -> str:
        return (f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n"
                f"+++ b/{path}\n@@ -0,0 +1 @@\n+x = 1\n")
    task = SWETask(instance_id="t-1", repo="t/t", base_commit="0" * 40, patch="",
                   test_patch=part("tests/test_hidden.py"), problem_statement="")
    diff = part("src/fix.py") + part("tests/test x.py") + part("tests/test_hidden.py")
    graded, dropped = grading_diff(diff, task)
    assert graded == part("src/fix.py")
    assert dropped == ["tests/test x.py", "tests/test_hidden.py"]


def test_workdir_is_the_final_stages_as_docker_resolves_it():
    """`envs.dockerfiles` (dockerfile-parse): continuations, comments, ENV/ARG substitution,
    a relative WORKDIR against the one before, stages. The hand regex took the last
    `WORKDIR \\S+` line of any stage, as written."""
    assert workdir_of("FROM x\nWORKDIR /a\nWORKDIR b/../c\n") == "/a/c"
    assert workdir_of("FROM x\nARG R=/srv\nENV APP=$R/app\nWORKDIR ${APP}\n") == "/srv/app"
    assert workdir_of("FROM x\nWORKDIR \\\n  /cont\n# WORKDIR /no\n") == "/cont"
    assert workdir_of('FROM x\nWORKDIR "/my app"\n') == "/my app"
    build = "FROM x AS build\nWORKDIR /src\n"
    assert workdir_of(build + "FROM y\nCOPY --from=build /src /s\n") == "/"
    assert workdir_of(build + "FROM build\nRUN make\n") == "/src"


def test_no_flow_keeps_its_own_copy_of_the_verifier():
    """One determinism environment, one reward-file reader, one test-patch application."""
    own = ROOT / "envs" / "verify.py"
    patterns = {
        "a determinism environment": re.compile(r'"PYTHONHASHSEED":\s*"0"'),
        "a reward-file reader": re.compile(r"/logs/verifier/reward\.(txt|json)\"\s*[,)]"),
        "a test-patch application": re.compile(r"apply_patch\(\s*(self\.)?task\.test_patch"),
    }
    found = []
    for folder in ("envs", "harness", "repolaunch", "synth", "policy", "envfactory"):
        for path in (ROOT / folder).rglob("*.py"):
            if path == own:
                continue
            text = path.read_text(encoding="utf-8")
            found += [f"{path.relative_to(ROOT)}: {what}" for what, pat in patterns.items()
                      if pat.search(text)]
    assert found == []


@pytest.fixture(scope="module")
def pyclamp(docker_engine):
    (built,) = eval_samples.build_tasks(["pyclamp"])
    return built.task


def _episode(task, actions):
    async def main():
        async with Pool(max_live=2, spares=0) as pool:
            env = make(task, pool=pool)
            await env.reset()
            for a in actions:
                await env.step(a)
            verdict = await env.verify()
            await env.close()
            return verdict
    return asyncio.run(main())


def _eval(task, patch, tmp_path):
    pred = Prediction(instance_id=task.instance_id, model_name_or_path="m", model_patch=patch)
    (report,) = evaluate([pred], tasks={task.instance_id: task}, runs_dir=tmp_path,
                         record=False).instances
    return report


def test_a_swe_prediction_gets_one_verdict_everywhere(pyclamp, tmp_path):
    episode_gamed = _episode(pyclamp, [WriteFile(path="tests/test_clamp.py",
                                                 content=GAMED_TEST)])
    gamed = _episode_diff(pyclamp)  # the same change, as a prediction for eval
    # gold: eval, episode and validation agree
    assert _eval(pyclamp, pyclamp.patch, tmp_path)["resolved"]
    assert _episode(pyclamp, [ApplyPatch(patch=pyclamp.patch)]).reward == 1.0
    checked = validate(pyclamp, pyclamp.env_spec, runs_before=1, runs_after=1, confirm_runs=0)
    assert checked.verified and set(pyclamp.FAIL_TO_PASS) <= set(checked.fail_to_pass)
    # a prediction that only rewrites the hidden test file: unresolved in both, and graded
    # (not a verifier error: the file goes back to the base before the test patch)
    report = _eval(pyclamp, gamed, tmp_path / "gamed")
    assert not report["resolved"] and report["failure_kind"] == "NONE", report["reason"]
    assert episode_gamed.reward == 0.0 and episode_gamed.failure is FailureKind.NONE
    # nothing: unresolved everywhere, and no infrastructure failure
    assert _eval(pyclamp, "", tmp_path / "empty")["failure_kind"] == "NONE"
    assert _episode(pyclamp, []).reward == 0.0


def _episode_diff(task) -> str:
    """The diff an agent that rewrote the test file would submit as its prediction."""
    async def main():
        async with Pool(max_live=1, spares=0) as pool:
            env = make(task, pool=pool)
            await env.reset()
            await env.step(WriteFile(path="tests/test_clamp.py", content=GAMED_TEST))
            res = await env.step(Shell(command="git diff"))
            await env.close()
            return res.observation.text.rsplit("\n[exit code", 1)[0] + "\n"
    return asyncio.run(main())


def test_a_terminal_bench_1_task_gets_one_verdict_in_synth_and_in_episodes(base_image):
    """TB1 grades the run of run-tests.sh itself (no reward file): synth's gates and an RL
    episode read it the same way."""
    task = terminal_task(base_image, task_id="tb1-add", test_command="bash /tests/run-tests.sh",
                         tests={"run-tests.sh": '[ "$(cat /app/answer.txt)" = 7 ]\n'})
    from envs import images

    image = images.build_context("task-tb1-add", task.dockerfile,
                                 {p: t.encode() for p, t in task.files.items()}, kind="task",
                                 log=lambda _m: None)
    assert trial(task, image, task.solution).reward == 1.0
    assert trial(task, image, None).reward == 0.0
    solved = _episode(task.model_copy(update={"image": image}), [Shell(command=task.solution)])
    assert solved.reward == 1.0 and solved.reason == "reward 1 from exit code 0"
    assert _episode(task.model_copy(update={"image": image}), []).reward == 0.0


@pytest.mark.docker
def test_an_agents_diff_holds_its_changes_not_the_setups(base_image):
    """What the environment's setup changed in the work tree (a lock file it updated, a config
    it wrote) is recorded when the image is made; the agent's diff is taken against that, so
    it applies to a clean sandbox of the image, which has the setup's changes already."""
    from envs.instance import SETUP_REF, checkout_script
    from envs.sandbox import Sandbox
    from envs.verify import agent_diff, record_setup

    git = "git -c user.name=t -c user.email=t@t"
    with Sandbox.start(base_image, workdir="/w") as sb:
        assert sb.exec(f"mkdir -p /w && cd /w && git init -q && echo 1 > lock && "
                       f"echo x > code && {git} add . && {git} commit -qm c").exit_code == 0
        commit = sb.exec("git rev-parse HEAD").stdout.strip()
        sb.exec("echo 2 > lock && echo cfg > setup.cfg")  # the setup's changes
        record_setup(sb, "/w")
        assert sb.exec(f"git rev-parse {SETUP_REF}^").stdout.strip() == commit
        # an instance's checkout (every sandbox of the image, every reset) keeps them
        sb.exec("echo junk > code && echo tmp > junk.txt")
        assert sb.exec(checkout_script(commit)).exit_code == 0
        assert sb.exec("cat code lock setup.cfg; ls junk.txt").stdout.split() == \
            ["x", "2", "cfg"]
        assert sb.exec("git diff --cached --quiet").exit_code == 0  # the index: the commit's
        sb.exec("echo y > code")  # the agent's
        diff = agent_diff(sb, commit, "/w")
        assert diff_paths(diff) == ["code"]
        # on a clean copy of the setup's tree it applies
        sb.exec(f"git checkout -q {SETUP_REF} -- . && git reset -q")
        assert sb.exec("cat code").stdout.strip() == "x"
        assert sb.apply_patch(diff).applied
        assert sb.exec("cat code lock").stdout.split() == ["y", "2"]
        # an instance checked out at another commit: the diff is against that commit
        other = sb.exec(f"git add -A && {git} commit -qm o && git rev-parse HEAD").stdout.strip()
        sb.exec("echo z > code")
        assert diff_paths(agent_diff(sb, other, "/w")) == ["code"]
        # an image made before the setup was recorded: against the commit, as before
        sb.exec(f"git update-ref -d {SETUP_REF} && git reset -q --hard {commit} && "
                "echo 2 > lock && echo y > code")
        assert diff_paths(agent_diff(sb, commit, "/w")) == ["code", "lock"]


# A test patch whose tests call code only the fix adds: without the fix nothing runs at all
# (pytest stops at the conftest, as go test, javac or tsc stop at the build).
NEEDS_THE_FIX = ("diff --git a/conftest.py b/conftest.py\nnew file mode 100644\n"
                 "--- /dev/null\n+++ b/conftest.py\n@@ -0,0 +1 @@\n"
                 "+from clamp import clamp_all  # noqa: F401\n")


def test_no_results_from_an_unchanged_tree_is_the_tasks_when_the_suite_runs_without_the_test_patch(
        pyclamp, tmp_path):
    """Doing nothing on such a task scores 0 (a fix is missing), in an episode and in eval;
    the same silence from a suite that reports nothing even without the test patch is the
    environment's (no reward)."""
    needs_fix = pyclamp.model_copy(update={"test_patch": pyclamp.test_patch + NEEDS_THE_FIX})
    nothing = _episode(needs_fix, [])
    assert nothing.reward == 0.0 and nothing.failure is FailureKind.MODEL, nothing.reason
    assert "a fix is missing" in nothing.reason
    report = _eval(needs_fix, "", tmp_path)
    assert not report["resolved"] and report["failure_kind"] == "MODEL", report["reason"]
    silent = pyclamp.env_spec.model_copy(update={"test_command": "echo no tests here"})
    broken = needs_fix.model_copy(update={"env_spec": silent})
    verdict = _episode(broken, [])
    assert verdict.reward is None and verdict.failure is FailureKind.BUILD_FAILED, verdict.reason
