"""Jobs on Celery: real `envfactory worker` processes, a real Redis broker, a real PostgreSQL
registry as the store of record. Everything is counted from the registry, not from logs.

- 500 jobs over two workers: none lost, none run twice (one row per execution);
- a finished job enqueued again is a no-op; a job's own exception is its failed result;
- a worker SIGKILLed in the middle of a build: the other worker finishes the job, and the
  registry holds the job and its environment once;
- mined candidates validated on workers are registered once, and their gold patches
  evaluated there resolve;
- terminal tasks synthesized on workers are registered once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from envs.config import reset_settings_cache
from envs.registry import Registry

ROOT = Path(__file__).resolve().parents[2]
ENVFACTORY = Path(sys.executable).with_name("envfactory")


class Workers:
    """`envfactory worker` processes, each in its own process group (killed as a whole)."""

    def __init__(self, env: dict[str, str], logs: Path) -> None:
        self.env, self.logs = env, logs
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, concurrency: int = 2) -> subprocess.Popen[bytes]:
        log = self.logs / f"worker-{len(self.procs)}.log"
        with open(log, "wb") as fh:
            proc = subprocess.Popen(
                [str(ENVFACTORY), "worker", "-c", str(concurrency)], env=self.env,
                stdout=fh, stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT)
        self.procs.append(proc)
        deadline = time.monotonic() + 90
        while b"ready." not in log.read_bytes():
            assert proc.poll() is None, log.read_text(errors="replace")[-2000:]
            assert time.monotonic() < deadline, "the worker never became ready"
            time.sleep(0.2)
        return proc

    @staticmethod
    def kill(proc: subprocess.Popen[bytes]) -> None:
        os.killpg(proc.pid, signal.SIGKILL)  # the worker and its pool children, no goodbye
        proc.wait()

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    self.kill(proc)


@pytest.fixture()
def queue(pg_database, redis_server, tmp_path, monkeypatch):
    """(workers, executor factory, registry URL) on a fresh database and an empty queue."""
    import redis

    from harness.queue import CeleryExecutor
    from tests.repolaunch.test_validate import share_env_specs

    db = pg_database()
    share_env_specs(tmp_path / "home")  # env images stay cache hits across homes
    redis.Redis.from_url(redis_server).flushdb()
    settings = {"ENVFACTORY_DB_URL": db, "ENVFACTORY_BROKER_URL": redis_server,
                "ENVFACTORY_QUEUE_LEASE_S": "3", "ENVFACTORY_HOME": str(tmp_path / "home")}
    for key, value in settings.items():
        monkeypatch.setenv(key, value)
    reset_settings_cache()
    env = {**os.environ, **settings, "PYTHONPATH": str(ROOT)}
    workers = Workers(env, tmp_path)

    def executor(**kw):
        return CeleryExecutor(broker_url=redis_server, wait_timeout=600, **kw)

    try:
        yield workers, executor, db
    finally:
        workers.stop_all()
        reset_settings_cache()


def _ppid(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def test_500_jobs_on_two_workers_none_lost_none_run_twice(queue) -> None:
    from tests.harness.queue_jobs import count_run

    workers, executor, db = queue
    w1, w2 = workers.start(), workers.start()
    outcomes = list(executor().map(count_run, range(500)))
    assert len(outcomes) == 500 and all(o.ok for o in outcomes)
    assert sorted(o.value["n"] for o in outcomes) == list(range(500))
    with Registry(db) as reg:
        jobs = reg.list_jobs(kind="count_run")
        assert len(jobs) == 500
        assert Counter(j.status for j in jobs) == {"done": 500}
        assert all(j.attempts == 1 for j in jobs)
        runs = reg.list_attempts("queue-test")  # one row per execution of a job
        assert sorted(a.step for a in runs) == list(range(500))
    parents = {_ppid(o.value["pid"]) for o in outcomes}
    assert parents == {w1.pid, w2.pid}  # both workers took jobs from the one queue


def test_a_finished_job_enqueued_again_is_a_no_op_and_a_failure_is_a_result(queue) -> None:
    from tests.harness.queue_jobs import count_run, fail

    workers, executor, db = queue
    workers.start()
    first = {o.job: o.value for o in executor().map(count_run, range(5))}
    again = {o.job: o.value for o in executor().map(count_run, range(5))}
    assert first == again
    failed = list(executor().map(fail, [7]))
    assert [(o.ok, o.worker_died) for o in failed] == [(False, False)]
    assert "job 7 fails on purpose" in failed[0].error
    with Registry(db) as reg:
        assert len(reg.list_attempts("queue-test")) == 5  # nothing ran twice
        assert [j.status for j in reg.list_jobs(kind="fail")] == ["failed"]
    # --force (eval, synth) runs finished jobs again
    rerun = list(executor(force=True).map(count_run, [0]))
    assert rerun[0].ok
    with Registry(db) as reg:
        assert len(reg.list_attempts("queue-test")) == 6


@pytest.mark.docker
def test_a_worker_killed_mid_build_the_other_finishes_it_once(queue, docker_engine,
                                                              tmp_path) -> None:
    from data import samples
    from repolaunch.jobs import BuildJob, build_one

    workers, executor, db = queue
    samples.write(samples.get("py-textkit"), tmp_path)
    job = BuildJob(source=str(tmp_path / "py-textkit"), rebuild=True)  # tens of seconds
    first = workers.start(concurrency=1)
    outcomes: list = []
    runner = threading.Thread(target=lambda: outcomes.extend(executor().map(build_one, [job])))
    runner.start()
    with Registry(db) as reg:
        deadline = time.monotonic() + 120
        while not (rows := reg.list_jobs(kind="build")) or rows[0].status != "running":
            assert time.monotonic() < deadline, "the build never started"
            time.sleep(0.2)
        time.sleep(2)  # well inside the build
        assert reg.list_jobs(kind="build")[0].status == "running"
        workers.kill(first)
        workers.start(concurrency=1)
        runner.join(timeout=600)
        assert not runner.is_alive()
        [outcome] = outcomes
        assert outcome.ok and outcome.value["ok"], outcome
        [row] = reg.list_jobs(kind="build")
        assert (row.status, row.attempts) == ("done", 2)  # the dead claim, then the finish
        envs = reg.list_envs()
        assert [e.image for e in envs] == [outcome.value["env"]["image"]]


@pytest.mark.docker
def test_mined_candidates_validated_on_workers_are_registered_once(queue, docker_engine,
                                                                   tmp_path) -> None:
    from data import samples
    from repolaunch.pipeline import mine_and_validate

    workers, executor, db = queue
    samples.write(samples.get("py-textkit"), tmp_path)
    workers.start()
    workers.start()
    with Registry(db) as reg:
        # The default runs: with one run each, the sample's flaky decoy can pass as verified
        # and its gold patch then fail the evaluation below.
        report = mine_and_validate(tmp_path / "py-textkit", registry=reg, runner=executor(),
                                   limit=2)
        assert report.validated == 2 and report.verified >= 1, report.rows()
        assert sorted(t.instance_id for t in reg.list_swe_tasks()) == \
            sorted(report.verified_ids)
        runs = reg.list_runs(kind="validate")
        assert Counter(r.target for r in runs) == {t.instance_id: 1 for t in report.tasks}
        assert len(reg.list_jobs(kind="validate")) == 2
        # and their gold patches evaluated on the workers resolve
        from harness.evaluate import evaluate

        tasks = {t.instance_id: t for t in reg.list_swe_tasks()}
        summary = evaluate("gold", tasks=tasks, executor=executor(), runs_dir=tmp_path / "runs",
                           run_id="gold")
        assert summary.resolved_instances == len(tasks), summary.instances
        assert len(reg.list_jobs(kind="evaluate")) == len(tasks)


@pytest.mark.docker
def test_terminal_tasks_synthesized_on_workers_are_registered_once(queue, docker_engine
                                                                   ) -> None:
    from synth.pipeline import run_synth

    workers, executor, db = queue
    workers.start()
    with Registry(db) as reg:
        report = run_synth(n=2, families="dedupe-lines,cron-add-job", seed=5, registry=reg,
                           oracle_runs=1, runner=executor())
        assert report.verified == 2, [o.detail for o in report.outcomes]
        assert sorted(t.task_id for t in reg.list_terminal_tasks()) == \
            sorted(o.task_id for o in report.outcomes)
        assert Counter(j.status for j in reg.list_jobs(kind="synth")) == {"done": 2}
