"""The one verifier: every flow that asks "did these tests pass" asks it here.

The RL episode (`envs.api`), the evaluation harness (`harness.evaluate`), task validation
(`repolaunch.validate`) and synth's gates (`synth.verify`) all call these, so the same code
gets the same verdict whichever of them looks at it:

- `DETERMINISM_ENV`: the pinned world every graded run sees (time zone, locale, hash seed,
  the seed a suite may read).
- SWE tasks: `put_test_patch` (the files the test patch touches go back to the base commit,
  then the patch applies: an edit of a hidden test is as if it never happened),
  `run_tests` (no stale report; run; fetch the report; parse) and `grade_swe` (SWE-bench's
  FAIL_TO_PASS / PASS_TO_PASS rules, failures typed). `verify_swe` is the three in order.
- Terminal tasks: `verify_terminal` (old /tests and /logs/verifier go first, so a planted
  reward is never read; the tests copied in; run; `read_reward`).
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex
import time
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from envs import diffs, dockerfiles, grading, reports
from envs.instance import SETUP_REF
from envs.models import EnvSpec, ExecResult, FailureKind, SWETask, TerminalTask, TestResult
from envs.sandbox import GIT as _GIT
from envs.sandbox import Sandbox, SandboxError

# Pinned so that every graded run of a task sees the same world, in every flow.
DETERMINISM_ENV: dict[str, str] = {
    "TZ": "UTC", "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1", "CI": "true", "ENVFACTORY_SEED": "0"}
REWARD_FILES = ("/logs/verifier/reward.txt", "/logs/verifier/reward.json")
REPORT_LIMIT = 128 << 20  # bytes of a test report read at most (a bigger one is not read)


class VerifyResult(BaseModel):
    """A verdict. `reward` is None exactly for infrastructure failures: drop the sample."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    reward: float | None
    failure: FailureKind = FailureKind.NONE
    reason: str = ""
    resolved: bool = False
    tests: list[TestResult] = Field(default_factory=list)
    tests_status: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    exit_code: int | None = None
    duration_s: float = 0.0
    log_tail: str = ""  # the end of the test run's output, for a reader of the verdict

    @property
    def is_infrastructure(self) -> bool:
        return self.failure.is_infrastructure


def failed(failure: FailureKind, reason: str, **kw: Any) -> VerifyResult:
    """A verdict without grading: reward 0 for the agent's failures, None for the infra's."""
    return VerifyResult(reward=None if failure.is_infrastructure else 0.0, failure=failure,
                        reason=reason, **kw)


def last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""


def diff_paths(patch: str) -> list[str]:
    """Every path a diff names, on either side (renames give both): `envs.diffs.paths`,
    tolerant (a part that does not read is named by its headers; `git apply` judges it)."""
    return diffs.paths(patch, strict=False)


# --------------------------------------------------------------------------- SWE tasks

# Files that decide how tests run or report, not what the code does: a change to them is
# dropped from what is graded (a root conftest.py that passes every report, sitecustomize,
# a .pth hook, pytest.ini addopts, a jest/vitest/mocha/karma config that skips the suite).
_HOOK_NAMES = frozenset({"conftest.py", "sitecustomize.py", "usercustomize.py", "pytest.ini",
                         ".pytest.ini", "tox.ini", "noxfile.py"})
_HOOK_PREFIXES = ("jest.config.", "vitest.config.", "vitest.workspace.", ".mocharc",
                  "karma.conf.", "playwright.config.", "phpunit.xml", ".rspec")
# Test files by the conventions of the languages envfactory builds (the hidden tests'
# neighbours: a helper or fixture they read goes back to the base as they do). Directory
# rules are for places that only ever hold tests: a top-level test folder, Maven's
# src/test, JS's __tests__, Go's testdata (not any folder named test: django/test and
# numpy/testing are library code a fix may touch).
_TOP_TEST_DIRS = frozenset({"test", "tests", "testing", "spec", "specs", "__tests__"})
_TEST_FILE = re.compile(
    r"(^test_.*\.py$|_test\.(py|go|rb|c|cc|cpp)$|_spec\.rb$|\.(test|spec)\.[cm]?[jt]sx?$|"
    r"(Test|Tests|IT)\.(java|kt|scala)$|Test\.php$)")


def is_test_harness_path(path: str) -> bool:
    """A test file, or a file that configures how tests run (dropped from an agent's diff
    before grading, as SWE-bench's split keeps tests out of a prediction's reach)."""
    parts = path.split("/")
    name, dirs = parts[-1], parts[:-1]
    if name in _HOOK_NAMES or name.endswith(".pth") or name.startswith(_HOOK_PREFIXES):
        return True
    if _TEST_FILE.search(name) or (dirs and dirs[0] in _TOP_TEST_DIRS):
        return True
    return "__tests__" in dirs or "testdata" in dirs or \
        "/src/test/" in "/" + "/".join(dirs) + "/"


def grading_diff(diff: str, task: SWETask) -> tuple[str, list[str]]:
    """What of an agent's diff is graded: its code changes. Files that touch the test
    patch's files, test files or test-harness files are dropped; returns the diff and the
    dropped paths. Read tolerantly (`envs.diffs`): a part that names no file is not graded."""
    hidden = set(diff_paths(task.test_patch))
    kept, dropped = [], []
    for f in diffs.parse(diff, strict=False):
        if any(p in hidden or is_test_harness_path(p) or p == ".git" or p.startswith(".git/")
               for p in f.paths):
            dropped += f.paths
        else:
            kept.append(f.text)
    return "".join(kept), sorted(set(dropped))


# `SETUP_REF` (envs.instance): the work tree as the environment's setup left it, kept as a
# commit on top of the checkout when the image is made, so that an agent's diff holds the
# agent's changes only: a clean sandbox of the image has the setup's.


def record_setup(sb: Sandbox, workdir: str) -> None:
    """Keep the work tree as the setup left it as `SETUP_REF` (parent: HEAD); nothing
    outside a git checkout. Raises SandboxError when git cannot."""
    script = f"""set -e
gitdir=$({_GIT} rev-parse --absolute-git-dir 2>/dev/null) || exit 0  # not a repository
{_GIT} rev-parse -q --verify HEAD >/dev/null || exit 0  # nothing checked out
idx="$gitdir/envfactory-setup-index"
trap 'rm -f "$idx"' EXIT
if [ -f "$gitdir/index" ]; then cp -p "$gitdir/index" "$idx"; fi
GIT_INDEX_FILE="$idx" {_GIT} add -A .
t=$(GIT_INDEX_FILE="$idx" {_GIT} write-tree)
c=$(GIT_AUTHOR_NAME=envfactory GIT_AUTHOR_EMAIL=envfactory@localhost \
    GIT_COMMITTER_NAME=envfactory GIT_COMMITTER_EMAIL=envfactory@localhost \
    GIT_AUTHOR_DATE='2000-01-01T00:00:00Z' GIT_COMMITTER_DATE='2000-01-01T00:00:00Z' \
    {_GIT} commit-tree "$t" -p HEAD -m 'envfactory: the work tree as the setup left it')
{_GIT} update-ref {SETUP_REF} "$c"
"""
    res = sb.exec(script, workdir=workdir, timeout=600)
    if res.exit_code != 0:
        raise SandboxError(f"could not record the setup's work tree: {last_line(res.output)}")


def agent_diff(sb: Sandbox, commit: str, workdir: str) -> str:
    """Everything the agent changed in the working tree (committed or not, untracked files
    too, ignored ones not), as a binary git diff (`Sandbox.diff`): against the tree the
    environment's setup left (`SETUP_REF`) when it was made on `commit`, else against
    `commit`. Raises DiffError when git refuses or the changes are over 64 MiB."""
    q = shlex.quote(commit)
    probe = sb.exec(f"s=$({_GIT} rev-parse -q --verify {SETUP_REF}^ 2>/dev/null) && "
                    f"c=$({_GIT} rev-parse -q --verify {q}^{{commit}} 2>/dev/null) && "
                    f'[ "$s" = "$c" ] && echo setup', workdir=workdir, timeout=60)
    base = SETUP_REF if probe.stdout.strip() == "setup" else commit
    return sb.diff(workdir=workdir, base=base, max_bytes=64 << 20)


def _reset_test_files(sb: Sandbox, task: SWETask, commit: str) -> ExecResult:
    """Put the files the test patch touches back as they are at `commit` (new ones gone)."""
    # An image whose history does not hold the commit (a squashed copy) has it as HEAD.
    head = (f"c={shlex.quote(commit)}; {_GIT} cat-file -e \"$c^{{commit}}\" 2>/dev/null "
            f"|| c=HEAD\n")
    script = "".join(
        f"if {_GIT} cat-file -e \"$c\":{shlex.quote(p)} 2>/dev/null; then "
        f"rm -rf {shlex.quote(p)}; {_GIT} checkout -q \"$c\" -- {shlex.quote(p)}; "
        f"else rm -rf {shlex.quote(p)}; fi\n"
        for p in diff_paths(task.test_patch))
    return sb.exec(f"set -e\n{head}{script}", timeout=120)


def put_test_patch(sb: Sandbox, task: SWETask, commit: str) -> VerifyResult | None:
    """Put the files the test patch touches back to `commit`, then apply it. None when done;
    a VERIFIER_ERROR verdict when that cannot be (the task is broken, not the code)."""
    if not task.test_patch.strip():
        return None
    res = _reset_test_files(sb, task, commit)
    if res.exit_code != 0:
        return failed(FailureKind.VERIFIER_ERROR,
                      f"could not reset the test files: {last_line(res.output)}")
    tp = sb.apply_patch(task.test_patch)
    if not tp.applied:
        return failed(FailureKind.VERIFIER_ERROR,
                      f"the task's test patch did not apply: {tp.reason}")
    return None


@dataclass(frozen=True)
class TestRun:
    """One run of a suite: what ran, what came out, and the report as parsed (or why not)."""

    command: str
    result: ExecResult
    parsed: reports.ParsedReport | None
    why: str  # why there are no results, when there are none
    seconds: float

    @property
    def has_results(self) -> bool:
        return self.parsed is not None and bool(self.parsed.results)

    def transcript(self) -> str:
        r = self.result
        return (f"$ {self.command}\n{r.output}\n[exit {r.exit_code}, {r.duration:.2f}s"
                f"{', timed out' if r.timed_out else ''}]\n")


def run_tests(sb: Sandbox, spec: EnvSpec, *, command: str | None = None,
              timeout: float | None = None) -> TestRun:
    """Run the suite with no stale report about, fetch its report and parse it."""
    command = command or spec.test_command
    t0 = time.monotonic()
    if spec.report_path:
        sb.exec(f"rm -f {shlex.quote(spec.report_path)}", timeout=30)
    res = sb.exec(command, timeout=timeout or spec.limits.timeout)
    data: bytes | str = res.stdout
    if spec.report_path:
        try:
            data = sb.get_file(spec.report_path, max_bytes=REPORT_LIMIT)
        except (FileNotFoundError, SandboxError):
            data = b""
    parsed, why = None, "the report holds no test result"
    try:
        parsed = reports.parse(spec.report_format, data, exit_code=res.exit_code)
    except reports.ReportParseError as exc:
        why = str(exc)
    return TestRun(command, res, parsed, why, time.monotonic() - t0)


def grade_swe(run: TestRun, task: SWETask, *, changed: bool, limits: str = "") -> VerifyResult:
    """SWE-bench's grading of one run. A run with no results is the change's doing when
    something was changed (it broke the build), the environment's when nothing was."""
    res = run.result
    ran = {"exit_code": res.exit_code, "duration_s": run.seconds,
           "log_tail": res.output[-2000:]}
    if res.timed_out:
        return failed(FailureKind.TIMEOUT, f"tests timed out after {res.duration:.0f}s", **ran)
    if res.oom_killed:
        return failed(FailureKind.OOM, f"out of memory{f' (limit {limits})' if limits else ''}",
                      **ran)
    if run.parsed is None or not run.parsed.results:
        kind = FailureKind.MODEL if changed else FailureKind.BUILD_FAILED
        return failed(kind, f"no test results ({run.why}); exit {res.exit_code}: "
                      f"{last_line(res.output)}", **ran)
    g = grading.grade(run.parsed, task.FAIL_TO_PASS, task.PASS_TO_PASS)
    return VerifyResult(
        reward=None if g.failure_kind.is_infrastructure else g.reward,
        failure=g.failure_kind, reason=g.reason, resolved=g.resolved,
        tests=list(run.parsed.results),
        tests_status={k: v.model_dump() for k, v in g.tests_status.items()}, **ran)


def _runs_without_test_patch(sb: Sandbox, task: SWETask, spec: EnvSpec, *, commit: str,
                             command: str | None, timeout: float | None) -> bool:
    """Whether the suite reports any result once the test patch is taken back out. A probe:
    anything going wrong means "cannot tell"."""
    try:
        if _reset_test_files(sb, task, commit).exit_code != 0:
            return False
        return run_tests(sb, spec, command=command, timeout=timeout).has_results
    except Exception:
        return False


def settle_no_results(verdict: VerifyResult, sb: Sandbox, task: SWETask, spec: EnvSpec, *,
                      commit: str, command: str | None = None,
                      timeout: float | None = None) -> VerifyResult:
    """An unchanged tree's BUILD_FAILED (no results with the test patch), asked again without
    the test patch: when the suite runs then, the test patch needs the fix to build (tests
    calling code only the fix adds: Go, Java, C, TypeScript), so it is the task's 0 (MODEL);
    otherwise the environment's failure stands. Any other verdict is returned as it is."""
    if verdict.failure is not FailureKind.BUILD_FAILED or not task.test_patch.strip() or \
            not _runs_without_test_patch(sb, task, spec, commit=commit, command=command,
                                         timeout=timeout):
        return verdict
    return verdict.model_copy(update={
        "failure": FailureKind.MODEL, "reward": 0.0,
        "reason": verdict.reason + "; the suite runs without the test patch, so a fix is "
                                   "missing"})


def verify_swe(sb: Sandbox, task: SWETask, spec: EnvSpec, *, commit: str, changed: bool,
               timeout: float | None = None, command: str | None = None) -> VerifyResult:
    """The hidden tests on whatever the sandbox holds now: test patch, run, grade."""
    t0 = time.monotonic()
    broken = put_test_patch(sb, task, commit)
    if broken is not None:
        return broken
    run = run_tests(sb, spec, command=command, timeout=timeout)
    verdict = settle_no_results(grade_swe(run, task, changed=changed,
                                          limits=spec.limits.memory),
                                sb, task, spec, commit=commit, command=command,
                                timeout=timeout)
    return verdict.model_copy(update={"duration_s": time.monotonic() - t0})


# --------------------------------------------------------------------------- terminal tasks


def workdir_of(dockerfile: str) -> str:
    """Where a task's agent and tests start: the working directory of the image its
    Dockerfile builds (`envs.dockerfiles.workdir_of`)."""
    return dockerfiles.workdir_of(dockerfile)


# A terminal task's answer is its container, so its tests run there; what they run must
# still be the image's. Shells and language runtimes (not the task's own deliverables, which
# may well be new commands) and interpreter start-up hooks, changed by the agent, void the
# reward: a shim of `bash` or `python3` could write any reward it likes.
_TOOL_DIRS = ("/bin/", "/sbin/", "/usr/bin/", "/usr/sbin/", "/usr/local/bin/",
              "/usr/local/sbin/")
_RUNTIMES = re.compile(r"^(sh|bash|dash|env|timeout|python[0-9.]*|pytest|py\.test|node|npm|"
                       r"npx|ruby|perl|php|go|java|cargo|uv|uvx)$")
_START_HOOKS = re.compile(r"(^/etc/ld\.so\.preload$|/(sitecustomize|usercustomize)\.py$|"
                          r"/site-packages/[^/]+\.pth$|/dist-packages/[^/]+\.pth$)")


def tampered_tools(sb: Sandbox) -> list[str]:
    """Shells, runtimes and interpreter hooks the agent added or changed in its container."""
    return sorted(p for p in sb.changed_paths()
                  if _START_HOOKS.search(p) or (p.startswith(_TOOL_DIRS)
                                                and _RUNTIMES.match(p.rsplit("/", 1)[1])))


def grades_by_exit_code(task: TerminalTask) -> bool:
    """Terminal-Bench 1's layout grades the run of run-tests.sh itself, with no reward file."""
    return "run-tests.sh" in task.test_command


def read_reward(sb: Sandbox) -> tuple[float | None, str]:
    """The reward the tests wrote, and where from; (None, why) when there is none."""
    for path in REWARD_FILES:
        try:
            raw = sb.get_file(path, max_bytes=1 << 16).decode("utf-8", "replace").strip()
        except FileNotFoundError:
            continue
        try:
            return (float(json.loads(raw)["reward"]) if path.endswith(".json")
                    else float(raw)), path
        except (ValueError, KeyError, TypeError) as exc:
            return None, f"{path} holds no number: {exc}"
    return None, ""


def verify_terminal(sb: Sandbox, task: TerminalTask, *, timeout: float | None = None,
                    command: str | None = None) -> VerifyResult:
    """Terminal tests: stale /tests and /logs/verifier go first (and must go: a planted
    reward is never read), the task's tests are copied in, run, and the reward read."""
    t0 = time.monotonic()
    timeout = timeout or task.verifier_timeout_sec
    tampered = tampered_tools(sb)
    if tampered:
        return failed(FailureKind.MODEL, "the agent changed what the tests run: "
                      f"{', '.join(tampered[:5])}", duration_s=time.monotonic() - t0)
    res = sb.exec("rm -rf /tests /logs/verifier && mkdir -p /tests /logs/verifier && "
                  "! ls /logs/verifier/* >/dev/null 2>&1", timeout=60)
    if res.exit_code != 0:
        return failed(FailureKind.VERIFIER_ERROR,
                      f"could not clear /tests and /logs/verifier: {last_line(res.output)}")
    sb.put_files({f"/tests/{p.lstrip('/')}": t for p, t in task.tests.items()})
    res = sb.exec(command or task.test_command, timeout=timeout)
    took = time.monotonic() - t0
    ran = {"exit_code": res.exit_code, "duration_s": took, "log_tail": res.output[-2000:]}
    if res.timed_out:
        return failed(FailureKind.TIMEOUT, f"tests timed out after {timeout:g}s", **ran)
    if res.oom_killed:
        return failed(FailureKind.OOM, "the tests ran out of memory", **ran)
    tests: list[TestResult] = []
    with contextlib.suppress(FileNotFoundError, SandboxError, reports.ReportParseError):
        tests = list(reports.parse("junit", sb.get_file("/logs/verifier/junit.xml")).results)
    value, source = read_reward(sb)
    if value is None and not source and grades_by_exit_code(task):
        value, source = (1.0 if res.exit_code == 0 else 0.0), f"exit code {res.exit_code}"
    if value is None:
        why = source or (f"the tests wrote no reward file (exit {res.exit_code}: "
                         f"{last_line(res.output)})")
        return failed(FailureKind.VERIFIER_ERROR, why, **ran)
    return VerifyResult(reward=value, resolved=value >= 1.0, tests=tests,
                        reason=f"reward {value:g} from {source}", **ran)
