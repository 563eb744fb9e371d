"""check_env: is a task a sound RL environment? Small checks in the manner of gymnasium's
env checker, each in its own episode:

- reset_deterministic: two resets (the first episode dirtied on purpose in between) give the
  same observation and the same files;
- reference_reward_1: the reference solution (SWE: the gold patch; terminal: solve.sh) gets
  reward 1 with no failure;
- noop_reward_0: doing nothing gets reward 0, and not by an infrastructure failure;
- verify_timeout: the reference run of the tests fits the task's verify timeout, and a verifier
  that hangs is stopped at the timeout asked for and reported as TIMEOUT.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from envs.api import Environment, Shell, Task, WriteFile, resolve_task, task_id_of
from envs.models import FailureKind
from envs.pool import Pool
from envs.sandbox import KILL_AFTER_S, SandboxError

HANG_PROBE_S = 2.0  # the verify timeout the hang check asks for
HANG_SLACK_S = 10.0  # what the stop may take beyond it (TERM, KILL, the host's grace)


class Check(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    passed: bool
    detail: str = ""
    seconds: float = 0.0


class CheckReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    task_id: str
    checks: list[Check] = Field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks)

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]

    def summary(self) -> str:
        marks = ", ".join(f"{c.name} {'ok' if c.passed else 'FAILED'}" for c in self.checks)
        return f"{self.task_id}: {'PASS' if self.passed else 'FAIL'} ({marks})"


async def _timed(name: str, fn: Callable[[], Awaitable[tuple[bool, str]]]) -> Check:
    t0 = time.monotonic()
    try:
        ok, detail = await fn()
    except (SandboxError, OSError, ValueError) as exc:
        ok, detail = False, f"{type(exc).__name__}: {exc}"
    return Check(name=name, passed=ok, detail=detail, seconds=round(time.monotonic() - t0, 3))


async def acheck_env(task: Task | str, *, pool: Pool | None = None, registry: Any = None,
                     hang_probe_s: float = HANG_PROBE_S) -> CheckReport:
    """Run every check on one task; never raises for a broken task (the report says why)."""
    resolved = resolve_task(task, registry)
    own = pool is None
    pool = pool or Pool(max_live=2, spares=0)
    checks: list[Check] = []
    try:
        env = Environment(resolved, pool=pool)
        ref_duration: list[float] = []

        async def deterministic() -> tuple[bool, str]:
            obs1, _ = await env.reset(seed=0, rollout_id="check-1")
            fp1 = await env.fingerprint()
            # Dirty the first episode: the second reset must not see any of it.
            await env.step(WriteFile(path="envfactory-check-dirt.txt", content="dirt\n"))
            await env.step(Shell(command="echo more >> envfactory-check-dirt.txt"))
            obs2, _ = await env.reset(seed=0, rollout_id="check-2")
            fp2 = await env.fingerprint()
            if obs1 != obs2:
                return False, "the two resets gave different observations"
            if fp1 != fp2:
                a, b = fp1.splitlines(), fp2.splitlines()
                diff = [x for x in a if x not in b] + [x for x in b if x not in a]
                return False, f"the two resets gave different files: {diff[:3]}"
            return True, "same observation and files"

        async def reference() -> tuple[bool, str]:
            await env.reset(seed=0, rollout_id="check-reference")
            await env.solve_reference()
            v = await env.verify()
            ref_duration.append(v.duration_s)
            if v.failure is not FailureKind.NONE or v.reward != 1.0:
                return False, f"reward {v.reward}, failure {v.failure.value}: {v.reason}"
            return True, f"reward 1 ({v.duration_s:.1f}s)"

        async def noop() -> tuple[bool, str]:
            await env.reset(seed=0, rollout_id="check-noop")
            v = await env.verify()
            if v.reward != 0.0 or v.is_infrastructure:
                return False, f"reward {v.reward}, failure {v.failure.value}: {v.reason}"
            return True, "reward 0"

        async def timeout() -> tuple[bool, str]:
            limit = env.verify_timeout
            if ref_duration and ref_duration[0] > limit:
                return False, (f"the reference run took {ref_duration[0]:.1f}s, over the "
                               f"task's verify timeout of {limit:g}s")
            await env.reset(seed=0, rollout_id="check-hang")
            env._verify_command = "sleep 100000"  # a verifier that never ends
            t0 = time.monotonic()
            try:
                v = await env.verify(timeout=hang_probe_s)
            finally:
                env._verify_command = None
            took = time.monotonic() - t0
            if v.failure is not FailureKind.TIMEOUT:
                return False, f"a hung verifier gave {v.failure.value}, not TIMEOUT: {v.reason}"
            if took > hang_probe_s + KILL_AFTER_S + HANG_SLACK_S:
                return False, f"a hung verifier was stopped after {took:.1f}s, asked {hang_probe_s:g}s"
            return True, f"hung verifier stopped after {took:.1f}s (asked {hang_probe_s:g}s)"

        for name, fn in (("reset_deterministic", deterministic), ("reference_reward_1", reference),
                         ("noop_reward_0", noop), ("verify_timeout", timeout)):
            checks.append(await _timed(name, fn))
        await env.close()
    finally:
        if own:
            await pool.close()
    return CheckReport(task_id=task_id_of(resolved), checks=checks)


def check_env(task: Task | str, **kwargs: Any) -> CheckReport:
    """Synchronous check_env (from inside an event loop, await acheck_env instead)."""
    return asyncio.run(acheck_env(task, **kwargs))


def cli_check_env(task_ids: list[str], *, as_json: bool = False) -> int:
    """The body of `envfactory check-env TASK...`: prints one line (or JSON) per task and
    returns the exit code (0 when every task passes)."""
    import json

    reports = [check_env(t) for t in task_ids]
    if as_json:
        print(json.dumps([{**r.model_dump(), "passed": r.passed} for r in reports], indent=2))
    else:
        for r in reports:
            print(r.summary())
            for c in r.failed:
                print(f"  {c.name}: {c.detail}")
    return 0 if all(r.passed for r in reports) else 1
