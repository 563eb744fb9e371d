"""Job functions the queue tests send to real workers (importable by them: PYTHONPATH)."""

from __future__ import annotations

import os
import time

from envs.registry import Registry


def count_run(n: int) -> dict[str, int]:
    """Leave one row in the registry per execution (attempts is append-only), so that a job
    run twice shows as two rows, whatever the jobs table says."""
    with Registry() as reg:
        reg.add_attempt(run_id="queue-test", step=n, command=f"job {n}", exit_code=0,
                        output_tail="", seconds=0.0)
    return {"n": n, "pid": os.getpid()}


def fail(n: int) -> None:
    raise ValueError(f"job {n} fails on purpose")


def sleep_then(n: int) -> int:
    time.sleep(n)
    return n
