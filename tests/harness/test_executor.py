"""The local executor: bounded, typed outcomes, survives a worker that dies."""

from __future__ import annotations

import os

import pytest

from harness.executor import LocalExecutor, run_inline


def square(x: int) -> int:
    return x * x


def explode(x: int) -> int:
    if x == 3:
        raise ValueError("three is bad")
    return x


def die_on(x: int) -> int:
    if x == 2:
        os._exit(9)  # the worker process vanishes, as under the OOM killer
    return x


def pid_of(_: int) -> int:
    return os.getpid()


def test_every_job_gets_one_outcome():
    outs = list(LocalExecutor(workers=2).map(square, range(10)))
    assert sorted(o.value for o in outs) == [x * x for x in range(10)]
    assert all(o.ok for o in outs)


def test_a_failing_job_is_an_outcome_not_a_crash():
    outs = {o.job: o for o in LocalExecutor(workers=2).map(explode, range(5))}
    assert not outs[3].ok and "three is bad" in outs[3].error and not outs[3].worker_died
    assert all(outs[i].ok for i in (0, 1, 2, 4))


def test_a_dead_worker_fails_only_its_job():
    outs = {o.job: o for o in LocalExecutor(workers=2).map(die_on, range(5))}
    assert set(outs) == set(range(5))
    assert not outs[2].ok and outs[2].worker_died
    assert all(outs[i].ok and outs[i].value == i for i in (0, 1, 3, 4))


def test_jobs_run_in_other_processes():
    pids = {o.value for o in LocalExecutor(workers=2).map(pid_of, range(4))}
    assert os.getpid() not in pids


def test_inline_has_the_same_contract():
    outs = list(run_inline(explode, [1, 3]))
    assert outs[0].ok and not outs[1].ok


def test_workers_must_be_positive():
    with pytest.raises(ValueError):
        LocalExecutor(workers=0)
