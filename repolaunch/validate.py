"""Validate a mined candidate into a verified SWE task: run its tests before and after the fix.

    result = validate(task, env)          # env: the EnvSpec built for the repository
    result.verified, result.reason        # True, None  |  False, "no_fail_to_pass", ...
    result.task                           # FAIL_TO_PASS / PASS_TO_PASS / env_spec filled in

Procedure. Every run is a fresh sandbox from the env image with the task's base commit
checked out (``env`` with ``checkout=base_commit``) and the determinism variables pinned
(`DETERMINISM_ENV`). "Before" runs apply ``test_patch`` only; "after" runs apply
``patch`` then ``test_patch`` (as eval and episodes do). The suite command runs
``runs_before`` times before and ``runs_after`` times after. Then ``confirm_runs`` more runs per side re-check the verdict:
just the FAIL_TO_PASS candidates when there are some (with the per-test command when one
is given, else the suite), the whole suite when there are none (so a flaky test is told
from a test that never fails); a test that flips in any run of a side is flaky. A per-test run that does not report a
candidate at all says nothing about it (the per-test id form may differ), so absence there
is "not observed", never "failed".

Classes, per test. Statuses are read as *pass* (PASSED, XFAIL), *fail* (FAILED, ERROR, or
absent from a suite run's report) and *skip* (SKIPPED).

- flaky: more than one class among the runs of one side. Excluded from every list, recorded.
- FAIL_TO_PASS: fail in every before run, pass in every after run.
- PASS_TO_PASS: pass in every run, before and after.
- new_tests: absent from every before report and passing in every after run. They *are*
  FAIL_TO_PASS (SWE-bench counts a test missing before the fix as failing; with the test
  patch applied, a test is absent before mostly because its module does not compile or
  import without the fix), and are listed separately as well so a dataset can drop them.
- broken build before: a before run whose report has no result at all, or only ERRORs
  that are flagged by the parser as a whole suite/package failing (``package-failed`` /
  ``suite-failed`` warnings) or come with an exit code other than 0/1 (pytest's
  "interrupted" at collection errors). When every before run is broken,
  ``before_build_broken`` is set and one more run at the base commit *without* the test
  patch is made: the tests that pass after are FAIL_TO_PASS, except those that passed at
  the base and that the test patch does not name (on a changed line, or as the function a
  changed hunk is in), which are PASS_TO_PASS — the three-state reading (base, test patch,
  fix) of Multi-SWE-bench. ``new_tests`` is then empty, since absence says nothing there.
- did not run: absent from every before report while another package or binary of the
  same run reported (the parser flags the one that did not build, or that a panic stopped:
  ``package-failed`` / ``suite-failed``), and not named by the test patch. Not
  FAIL_TO_PASS, in either reading: its package not building says nothing about it.
- gold breaks: pass in every before run, fail in every after run.

SWE-bench's reading (``reading="swebench"``, what `repolaunch.importer` uses to replicate a
dataset): two states only (no base run), ids in the form SWE-bench's log parser writes them
(`reports.swebench_id`: pytest ids cut at the first whitespace; tests that share a cut id
take the worst of their statuses), a test absent before the fix failed then, and a test the
fix breaks is recorded but does not reject the task. ``scope`` (the test patch's files)
narrows every run through the per-test command; the confirm runs then take the full ids
behind the FAIL_TO_PASS candidates. ``log_dir`` keeps every run's output.

Reason codes (the first that applies): ``env_build_failed`` (no image, the checkout or the
sandbox failed, or no run on either side produced a result), ``test_patch_failed``,
``patch_failed``, ``timeout``, ``gold_breaks_tests`` (a passing test fails with the fix,
or the fix leaves no result at all), ``no_fail_to_pass`` (FAIL_TO_PASS empty; the detail
names the flaky tests when every candidate was flaky).
"""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from envs import reports
from envs.files import atomic_write
from envs.instance import open_instance
from envs.models import EnvSpec, SWETask, TestStatus
from envs.sandbox import SandboxError
from envs.verify import DETERMINISM_ENV, put_test_patch, run_tests

Log = Callable[[str], None]
Side = Literal["before", "after", "base"]
Reading = Literal["factory", "swebench"]

REASONS = ("env_build_failed", "test_patch_failed", "patch_failed", "timeout",
           "gold_breaks_tests", "no_fail_to_pass")

_PASS = frozenset({TestStatus.PASSED, TestStatus.XFAIL})
# worse is higher: what a cut id shared by several tests reads as
_RANK = {TestStatus.PASSED: 0, TestStatus.XFAIL: 1, TestStatus.SKIPPED: 2,
         TestStatus.FAILED: 3, TestStatus.ERROR: 4}
_FAIL = frozenset({TestStatus.FAILED, TestStatus.ERROR})


class RunSummary(BaseModel):
    """One run: which side, how it ran, what it counted."""

    model_config = ConfigDict(frozen=True)

    side: Side
    index: int
    phase: Literal["main", "confirm"] = "main"
    per_test: bool = False
    exit_code: int | None = None
    seconds: float = 0.0
    counts: dict[str, int] = Field(default_factory=dict)
    build_broken: bool = False
    timed_out: bool = False
    error: str | None = None  # why the run produced nothing (patch, sandbox, report)


class ValidationResult(BaseModel):
    instance_id: str
    verified: bool
    reason: str | None = None
    detail: str = ""
    fail_to_pass: list[str] = Field(default_factory=list)
    pass_to_pass: list[str] = Field(default_factory=list)
    flaky: list[str] = Field(default_factory=list)
    new_tests: list[str] = Field(default_factory=list)
    gold_breaks: list[str] = Field(default_factory=list)
    did_not_run: list[str] = Field(default_factory=list)
    before_build_broken: bool = False
    runs: list[RunSummary] = Field(default_factory=list)
    seconds: float = 0.0
    task: SWETask

    def summary(self) -> dict[str, object]:
        """A compact, JSON-ready record (for run records and --json output)."""
        return {
            "instance_id": self.instance_id, "verified": self.verified, "reason": self.reason,
            "detail": self.detail, "FAIL_TO_PASS": self.fail_to_pass,
            "PASS_TO_PASS": len(self.pass_to_pass), "flaky": self.flaky,
            "new_tests": self.new_tests, "gold_breaks": self.gold_breaks,
            "did_not_run": self.did_not_run, "before_build_broken": self.before_build_broken, "seconds": self.seconds,
            "runs": [r.model_dump(mode="json") for r in self.runs],
        }


class _Classes(BaseModel):
    fail_to_pass: list[str] = Field(default_factory=list)
    pass_to_pass: list[str] = Field(default_factory=list)
    flaky: list[str] = Field(default_factory=list)
    new_tests: list[str] = Field(default_factory=list)
    gold_breaks: list[str] = Field(default_factory=list)
    did_not_run: list[str] = Field(default_factory=list)
    before_build_broken: bool = False


class _Observed(BaseModel):
    """One run's statuses; `partial` runs (per-test) only speak about what they report."""

    summary: RunSummary
    statuses: dict[str, TestStatus] = Field(default_factory=dict)
    partial: bool = False
    # some package or binary failed to build or stopped (a panic) while others reported
    part_broken: bool = False
    requested: list[str] = Field(default_factory=list)  # what a partial run was asked for
    # SWE-bench's reading: the full ids behind each cut id, to run them one by one
    full_ids: dict[str, list[str]] = Field(default_factory=dict)
    fatal: str | None = None  # a reason code that ends the validation


def _keep_log(log_dir: Path | None, name: str, text: str) -> None:
    if log_dir is None:
        return
    log_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(log_dir / name, text)


def _one_run(task: SWETask, spec: EnvSpec, side: Side, index: int, *, command: str,
             per_test: bool, phase: Literal["main", "confirm"], timeout: float | None,
             requested: list[str], log_dir: Path | None = None,
             swebench_ids: bool = False) -> _Observed:
    t0 = time.monotonic()
    log_name = f"{side}-{phase}-{index + 1}.log"

    def out(fatal: str | None = None, error: str | None = None, **kw: object) -> _Observed:
        summary = RunSummary(side=side, index=index, phase=phase, per_test=per_test,
                             seconds=round(time.monotonic() - t0, 2), error=error,
                             **kw)  # type: ignore[arg-type]
        return _Observed(summary=summary, fatal=fatal, partial=per_test)

    try:
        sb = open_instance(spec, env={**DETERMINISM_ENV, **spec.env},  # as the harness does
                           labels={"envfactory.validate": task.instance_id[:60]})
    except SandboxError as exc:
        return out("env_build_failed", f"sandbox: {exc}")
    try:
        # The gold patch first, then the test patch through the one verifier (test files
        # put back, then patched), in the order eval and the episode use.
        if side == "after":
            res = sb.apply_patch(task.patch)
            if not res.applied:
                _keep_log(log_dir, log_name, f"patch does not apply: {res.reason}\n")
                return out("patch_failed", res.reason)
        if side != "base":
            refused = put_test_patch(sb, task, spec.checkout or task.base_commit)
            if refused is not None:
                _keep_log(log_dir, log_name, f"test patch does not apply: {refused.reason}\n")
                return out("test_patch_failed", refused.reason)
        run = run_tests(sb, spec, command=command, timeout=timeout)
        ran = run.result
        _keep_log(log_dir, log_name, run.transcript())
        if ran.timed_out:
            return out("timeout", f"tests ran past {timeout or spec.limits.timeout:.0f}s",
                       exit_code=ran.exit_code, timed_out=True)
    except SandboxError as exc:
        return out("env_build_failed", f"sandbox: {exc}")
    finally:
        sb.close()
    error = None if run.parsed is not None else f"report unreadable: {run.why}"
    results = list(run.parsed.results) if run.parsed is not None else []
    codes = set(run.parsed.warning_codes) if run.parsed is not None else set()
    # SWE-bench's ids: its parser's map is keyed by the cut id. Where tests that share a
    # cut id disagree, the cut id takes the worst of them, as grading will (it passes only
    # when every test it stands for does).
    statuses: dict[str, TestStatus] = {}
    full_ids: dict[str, list[str]] = {}
    for r in results:
        key = reports.swebench_id(r.test_id, spec.report_format) if swebench_ids else r.test_id
        prior = statuses.get(key)
        if prior is None or _RANK[r.status] > _RANK[prior]:
            statuses[key] = r.status
        if swebench_ids:
            full_ids.setdefault(key, []).append(r.test_id)
    # A whole-suite failure (the build or collection broke) is not a verdict on any test:
    # nothing reported, whole-suite/package errors, or nothing but errors (pytest stops a
    # session at collection errors, reporting one ERROR per module it could not import).
    only_errors = all(s is TestStatus.ERROR for s in statuses.values())
    broken = not statuses or (only_errors and (bool(codes & reports.PART_FAILED)
                                               or ran.exit_code not in (0, 1)))
    if not statuses and error is None:
        tail = ran.output.strip().splitlines()[-1:] or [""]
        error = f"no test results; exit {ran.exit_code}: {tail[0][:200]}"
    counts = {s.value.lower(): 0 for s in TestStatus}
    for s in statuses.values():
        counts[s.value.lower()] += 1
    counts["total"] = len(statuses)
    summary = RunSummary(side=side, index=index, phase=phase, per_test=per_test,
                         exit_code=ran.exit_code, seconds=round(time.monotonic() - t0, 2),
                         counts=counts, build_broken=broken, error=error)
    return _Observed(summary=summary, statuses={} if broken else statuses, partial=per_test,
                     part_broken=not broken and bool(codes & reports.PART_FAILED),
                     requested=requested if per_test else [], full_ids=full_ids)


_TEST_LIKE = re.compile(r"(?i)^test.|.test$|^(Fuzz|Benchmark|Example)")
_GO_SUBTEST = re.compile(r"^((?:Test|Fuzz|Benchmark|Example)\w*)/(.+)$")


def _named_in(test_id: str, patch: str) -> bool:
    """Whether the test's own name (the last part of its id) appears on a changed line, or
    in the header of a hunk that edits lines (git names the enclosing function there)."""
    bare = re.sub(r"[\[(].*$", "", test_id)  # parameters: test_x[1.5], Test(args)
    parts = [p for p in re.split(r"[/:.#\s]+", bare.strip("/:. ")) if p]
    if not parts:
        return True
    go = _GO_SUBTEST.match(test_id) if "::" not in test_id else None
    quoted: set[str] = set()
    if go:
        # Go's TestX/case: the case's name comes from a string in the source (t.Run's, or
        # a table's), so it counts only quoted, spaces as Go turned them into "_"; its
        # first word on a changed line of any file ("foo" in a grammar fixture) does not
        case = go.group(2).split("/")[-1]
        names = {go.group(1)}
        quoted = {case, case.replace("_", " ")}
    else:
        # the test's own name, and the test function it belongs to
        names = {parts[-1]} | {p for p in parts[:-1] if _TEST_LIKE.match(p)}
        names = {n for n in names if len(n) >= 3 and re.match(r"^[A-Za-z_]", n)}
        last = re.split(r"::|/", test_id.strip("/"))[-1]
        if re.search(r"[\[(]", last) and not _TEST_LIKE.match(parts[-1]):
            # a case named by its data ("renders (with props)"): the whole name, as the
            # source writes it, not its first word; a test function with parameters
            # (pytest's test_x[1.5]) keeps its bare name
            names = (names - {parts[-1]}) | {last, last.replace("_", " ")}
        if not names:
            return True  # too short to tell: keep it a FAIL_TO_PASS
    words = "|".join(re.escape(n) for n in sorted(names))
    strings = "|".join(re.escape(n) for n in sorted(quoted))
    pat = re.compile(rf"(?<![A-Za-z0-9_])(?:{words})(?![A-Za-z0-9_])"
                     + (rf"|([\"'`])(?:{strings})\1" if strings else ""))
    header, removes = "", False
    for line in [*patch.splitlines(), "@@"]:
        if line.startswith(("+++", "---")):
            continue
        if line.startswith("@@"):
            # git names the function a hunk starts in; it is the changed one only when the
            # hunk edits lines (a pure addition after a function names that function)
            if removes and pat.search(header):
                return True
            header, removes = line, False
        elif line.startswith(("+", "-")):
            removes = removes or line.startswith("-")
            if pat.search(line):
                return True
    return False


def _cls(status: TestStatus | None) -> str:
    if status is None or status in _FAIL:
        return "fail"
    return "pass" if status in _PASS else "skip"


def _classes(runs: Iterable[_Observed], test_id: str) -> list[str]:
    out = []
    for r in runs:
        status = r.statuses.get(test_id)
        # A per-test run observes only what it was asked to run, and only when it reports
        # it (runners mark the tests a filter left out as skipped; id forms may differ).
        if r.partial and (status is None or test_id not in r.requested):
            continue
        out.append(_cls(status))
    return out


def scoped_command(per_test_command: str, tests: list[str]) -> str:
    """The per-test command template with the given ids or files."""
    return per_test_command.replace("{tests}", " ".join(shlex.quote(t) for t in tests))


def validate(task: SWETask, env: EnvSpec, *, runs_before: int = 2, runs_after: int = 3,
             confirm_runs: int = 3, per_test_command: str | None = None,
             scope: list[str] | None = None, scope_command: str | None = None,
             reading: Reading = "factory",
             timeout: float | None = None, log_dir: Path | None = None,
             log: Log = lambda m: None) -> ValidationResult:
    """Run the task's tests before and after its fix; classify; verify or reject it.

    ``scope``: test files the runs are limited to, through ``scope_command`` (SWE-bench
    runs the test patch's files; without a scope command the whole suite runs); the
    verified task's test command is then the scoped one. ``reading``: "factory" (the module doc) or "swebench" (SWE-bench's own:
    two states only, a test absent before the fix failed then, and a test the fix breaks
    is recorded but does not reject the task). ``log_dir``: every run's output is kept
    there, ``<side>-<phase>-<n>.log``."""
    t0 = time.monotonic()
    spec = env.model_copy(update={"checkout": task.base_commit})
    if scope and scope_command and "{tests}" in scope_command:
        spec = spec.model_copy(update={"test_command": scoped_command(scope_command, scope)})
    swebench = reading == "swebench"
    observed: list[_Observed] = []

    def finish(reason: str | None, detail: str = "",
               found: _Classes | None = None) -> ValidationResult:
        found = found or _Classes()
        verified = reason is None
        new_task = task
        if verified:
            new_task = task.model_copy(update={"FAIL_TO_PASS": found.fail_to_pass,
                                               "PASS_TO_PASS": found.pass_to_pass,
                                               "env_spec": spec})
        return ValidationResult(instance_id=task.instance_id, verified=verified, reason=reason,
                                detail=detail, runs=[o.summary for o in observed],
                                seconds=round(time.monotonic() - t0, 2), task=new_task,
                                **found.model_dump())

    if not spec.image:
        return finish("env_build_failed", f"environment {spec.name!r} has no built image")

    def run(side: Side, n: int, phase: Literal["main", "confirm"], command: str,
            per_test: bool, requested: list[str] | None = None) -> str | None:
        for i in range(n):
            o = _one_run(task, spec, side, i, command=command, per_test=per_test,
                         phase=phase, timeout=timeout, requested=requested or [],
                         log_dir=log_dir, swebench_ids=swebench)
            observed.append(o)
            s = o.summary
            log(f"  {task.instance_id} {side} {phase} #{i + 1}: "
                f"{s.counts.get('total', 0)} tests, {s.counts.get('passed', 0)} passed, "
                f"{s.seconds:.1f}s" + (f" ({o.fatal}: {s.error})" if o.fatal else ""))
            if o.fatal:
                return o.fatal
        return None

    for side, n in (("before", runs_before), ("after", runs_after)):
        fatal = run(side, max(1, n), "main", spec.test_command, False)  # type: ignore[arg-type]
        if fatal:
            return finish(fatal, observed[-1].summary.error or "")

    def side_runs(side: Side) -> list[_Observed]:
        return [o for o in observed if o.summary.side == side]

    def classify() -> _Classes:
        before, after = side_runs("before"), side_runs("after")
        before_broken = all(o.summary.build_broken for o in before if not o.partial)
        part_broken = any(o.part_broken for o in before if not o.partial)
        ids = sorted({t for o in observed for t in o.statuses})
        f2p, p2p, flaky, new, breaks, unrun = [], [], [], [], [], []
        for t in ids:
            b, a = _classes(before, t), _classes(after, t)
            if len(set(b)) > 1 or len(set(a)) > 1:
                flaky.append(t)
                continue
            if not a:
                continue
            bc, ac = (b[0] if b else "fail"), a[0]
            if bc == "fail" and ac == "pass":
                absent = all(t not in o.statuses for o in before if not o.partial)
                if absent and part_broken and not _named_in(t, task.test_patch):
                    # its package did not build (or a panic stopped it) before the fix, and
                    # the test patch is not about it: it did not run, it did not fail
                    unrun.append(t)
                    continue
                f2p.append(t)
                if not before_broken and absent:
                    new.append(t)
            elif bc == "pass" and ac == "pass":
                p2p.append(t)
            elif bc == "pass" and ac == "fail":
                breaks.append(t)
        if before_broken and base_pass and not swebench:
            # The test patch broke the build before the fix, so every test "failed" then.
            # A test that passed at the base commit without the test patch, and that the
            # test patch does not touch, says nothing about the fix: it is PASS_TO_PASS
            # (Multi-SWE-bench's three-state reading: base, test patch, fix).
            keep = [t for t in f2p if t not in base_pass or _named_in(t, task.test_patch)]
            p2p += [t for t in f2p if t not in keep]
            f2p = keep
        return _Classes(fail_to_pass=f2p, pass_to_pass=sorted(p2p), flaky=flaky,
                        new_tests=new, gold_breaks=breaks, did_not_run=unrun,
                        before_build_broken=before_broken)

    after_broken = all(o.summary.build_broken for o in side_runs("after"))
    before_broken = all(o.summary.build_broken for o in side_runs("before"))
    if after_broken:
        if before_broken:
            return finish("env_build_failed", "no run produced test results: "
                          + (observed[-1].summary.error or ""),
                          _Classes(before_build_broken=True))
        return finish("gold_breaks_tests", "with the fix applied the tests produce no "
                      "results (the fix breaks the build): "
                      + (observed[-1].summary.error or ""))

    base_pass: set[str] = set()
    if before_broken and not swebench:
        # One run at the base commit without the test patch tells the tests that were
        # already passing from those the test patch is about.
        fatal = run("base", 1, "main", spec.test_command, False)
        base = observed[-1]
        if not fatal and not base.summary.build_broken:
            base_pass = {t for t, st in base.statuses.items() if _cls(st) == "pass"}
    found = classify()
    if confirm_runs > 0:
        # Re-check: a coin-toss test can fail twice, then pass three times (a false
        # FAIL_TO_PASS), or behave the same five times (hiding that it is flaky, and then
        # a flaky change reads as one whose test never failed). With candidates, only they
        # are re-run (per-test when possible); without, the whole suite is.
        cands = found.fail_to_pass
        cmd, per_test = spec.test_command, False
        runnable = cands
        if swebench:
            # SWE-bench's cut ids run as the full ids behind them, where those are node ids
            full = {c: [f for o in observed for f in o.full_ids.get(c, [])] for c in cands}
            runnable = sorted({f for fs in full.values() for f in fs}) \
                if reports.is_pytest_format(spec.report_format) and all(full.values()) else []
        if runnable and per_test_command and "{tests}" in per_test_command:
            cmd = scoped_command(per_test_command, runnable)
            per_test = True
        for side in ("before", "after"):
            fatal = run(side, confirm_runs, "confirm", cmd, per_test,  # type: ignore[arg-type]
                        cands)
            if fatal:
                return finish(fatal, observed[-1].summary.error or "", found)
        found = classify()

    if found.gold_breaks and not swebench:
        return finish("gold_breaks_tests",
                      f"{len(found.gold_breaks)} test(s) pass before the fix and fail after: "
                      + ", ".join(found.gold_breaks[:5]), found)
    if not found.fail_to_pass:
        detail = "no test fails before the fix and passes after it"
        if found.flaky:
            detail += f"; flaky (excluded): {', '.join(found.flaky[:10])}"
        return finish("no_fail_to_pass", detail, found)
    return finish(None, f"{len(found.fail_to_pass)} FAIL_TO_PASS, "
                  f"{len(found.pass_to_pass)} PASS_TO_PASS"
                  + (f", {len(found.flaky)} flaky excluded" if found.flaky else "")
                  + (f", {len(found.gold_breaks)} broken by the fix (not graded)"
                     if found.gold_breaks else "")
                  + (f", {len(found.did_not_run)} did not run before (not graded)"
                     if found.did_not_run else ""), found)
