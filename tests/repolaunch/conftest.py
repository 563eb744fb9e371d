"""Support for RepoLaunch tests: run a plan on a sample repository in real containers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from data import samples
from envs import images, reports
from envs.models import ExecResult, Limits
from envs.sandbox import Sandbox
from repolaunch.detect import Detection
from repolaunch.languages import Plan, get

SETUP_LIMITS = Limits(memory="4g", pids=4096, timeout=1200)


@dataclass
class PlanRun:
    plan: Plan
    repo: Path
    setup: list[ExecResult]
    test: ExecResult
    report: reports.ParsedReport


def run_plan(sample: samples.SampleRepo, dest: Path, *, detection: Detection | None = None,
             commit: str | None = None) -> PlanRun:
    """Write the sample, plan it, set it up (network on), then test it (network off)."""
    repo = samples.write(sample, dest)
    if commit:
        samples._git(repo, "checkout", "-q", commit)
    det = detection or Detection(primary=sample.language, build_system=sample.build_system,
                                 test_framework=sample.test_framework)
    plan = get(det.primary).plan(repo, det)
    image = images.ensure(plan.image_family, suite=plan.suite).tag
    setup: list[ExecResult] = []
    with Sandbox.start(image, network=True, workdir="/testbed", limits=SETUP_LIMITS) as sb:
        sb.put_dir(repo, "/testbed")
        for step in plan.setup_steps:
            res = sb.exec(step, env=plan.env)
            setup.append(res)
            assert res.exit_code == 0, f"setup step failed: {step}\n{res.output[-3000:]}"
        snap = sb.snapshot()  # the env image: tests run from it with the network off
        with Sandbox.start(snap.ref, network=plan.network_at_test, workdir="/testbed",
                           limits=SETUP_LIMITS) as tb:
            test = tb.exec(plan.test_command, env=plan.env)
            data: bytes | str = test.stdout
            if plan.report_path:
                try:
                    data = tb.get_file(plan.report_path)
                except FileNotFoundError:
                    data = b""
    report = reports.parse(plan.report_format, data, exit_code=test.exit_code)
    return PlanRun(plan=plan, repo=repo, setup=setup, test=test, report=report)


@pytest.fixture()
def plan_runner(docker_engine, tmp_path):
    def run(sample: samples.SampleRepo, **kw) -> PlanRun:
        return run_plan(sample, tmp_path, **kw)

    return run


def detection_of(sample: samples.SampleRepo) -> Detection:
    """The Detection a sample declares (plan tests do not depend on detect())."""
    return Detection(primary=sample.language, build_system=sample.build_system,
                     test_framework=sample.test_framework)


def before_and_after(sample: samples.SampleRepo, index: int
                     ) -> tuple[samples.SampleRepo, samples.SampleRepo]:
    """The sample at the fix's parent plus the fix's test files, and at the fix.

    Test files are told apart by the miner's own classifier, as a mined task's would be.
    """
    import dataclasses

    from repolaunch.mine.git import FileRole, classify_path

    fix = sample.commits[index]
    tests = {p: c for p, c in fix.files.items() if classify_path(p) is FileRole.TEST}
    assert tests, f"commit {index} changes no test file"
    before = (*sample.commits[:index], samples.Commit(f"test patch of: {fix.message}", tests,
                                                      date=fix.date))
    # plan_runner writes every sample of a test under one folder: the two need two names
    return (dataclasses.replace(sample, commits=before),
            dataclasses.replace(sample, name=sample.name + "-after",
                                commits=sample.commits[: index + 1]))


def statuses(report: reports.ParsedReport) -> dict[str, str]:
    return {r.test_id: r.status.value for r in report.results}


def write_files(root: Path, files: dict[str, str]) -> Path:
    """Files (repo-relative path -> text) written under root; returns root."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root
