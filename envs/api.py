"""The episode API RL trainers use: gymnasium-shaped, async, one API for SWE and terminal tasks.

    async with Pool(max_live=8) as pool:
        env = envs.make("envfactory__pyclamp-1", pool=pool)
        obs, info = await env.reset(seed=0, rollout_id="r1")
        res = await env.step(Shell(command="cat clamp.py"))
        res = await env.step(ApplyPatch(patch=diff))
        res = await env.step(Submit())
        verdict = await env.verify()      # VerifyResult(reward=1.0, failure=NONE, ...)
        await env.close()

- `reset` hands out a clean, already-started sandbox from the pool (see envs/pool.py); the
  previous one is recycled in the background. Environments are deterministic: `seed` is
  recorded, not used; two resets give the same observation and the same files.
- `step` never raises for the agent's mistakes: a failed command, a missing file or a patch
  that does not apply is an observation, with `info["failure_kind"]` MODEL / PATCH_FAILED /
  TIMEOUT. A container that died ends the episode (`terminated`, ENV_COLLAPSE).
- `verify` runs the hidden tests (SWE: the task's test_patch, applied only now, on test files
  put back to the base commit; terminal: the task's tests copied to /tests only now, after any
  stale reward file is removed) and grades them. `reward` is None whenever the failure kind is
  an infrastructure one (ENV_COLLAPSE, VERIFIER_ERROR, BUILD_FAILED): such a sample carries no
  signal about the policy, and a None cannot be averaged in by accident.
- Every Docker call runs in the pool's executor; nothing here blocks the event loop.

This module is the public face (`make`, `resolve_task`, `load_environment`,
`SyncEnvironment`, and the names below); the episode is `envs/episode.py`, what differs per
task kind `envs/episode_kinds.py`.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from envs.actions import (  # noqa: F401  (re-exported: the episode API's action vocabulary)
    SYSTEM_PROMPT,
    ActionError,
    AnyAction,
    ApplyPatch,
    Observation,
    ReadFile,
    Shell,
    Submit,
    WriteFile,
    parse_action,
    tool_call_id,
    tools,
)
from envs.episode import (  # noqa: F401  (re-exported)
    OBS_LIMIT,
    READ_LIMIT,
    Environment,
    EnvState,
    StepResult,
    default_pool,
    shutdown,
)
from envs.episode_kinds import EpisodeError, Task, prompt_of, task_id_of  # noqa: F401
from envs.errors import UnknownName
from envs.pool import Pool
from envs.verify import VerifyResult

T = TypeVar("T")


# --------------------------------------------------------------------------- constructors


def resolve_task(task: Task | str, registry: Any = None) -> Task:
    """A task object as is, or a task id looked up in the registry (SWE, then terminal)."""
    if not isinstance(task, str):
        return task
    from envs.registry import Registry

    reg = registry or Registry()
    try:
        found: Task | None = reg.get_swe_task(task) or reg.get_terminal_task(task)
    finally:
        if registry is None:
            reg.close()
    if found is None:
        raise UnknownName(f"no task {task!r} in the registry")
    return found


def make(task: Task | str, *, registry: Any = None, pool: Pool | None = None,
         remote: str | None = None, **kwargs: Any) -> Environment:
    """An environment for a task (or a task id in the registry). Keyword arguments go to
    Environment: max_steps, step_timeout, verify_timeout, reset_mode, auto_verify,
    fresh_grading. With `remote=URL` (an `envfactory serve`), the same API over the network:
    an envs.remote.RemoteEnvironment, the task resolved by the server (also `token=`)."""
    if remote is not None:
        from envs.remote import RemoteEnvironment

        return RemoteEnvironment(task, remote, **kwargs)  # type: ignore[return-value]
    return Environment(resolve_task(task, registry), pool=pool, **kwargs)


def load_environment(env_id: str | None = None, *, task: Task | None = None,
                     **kwargs: Any) -> Environment:
    """verifiers-style entry point: `load_environment("<task id>", **env_args)`, one task's
    episode API. The real verifiers environment (a `verifiers.v1.Env` over registry tasks)
    is `envs.verifiers_env.load_environment`."""
    target = task if task is not None else env_id
    if target is None:
        raise ValueError("load_environment needs a task id or task=")
    return make(target, **kwargs)


# --------------------------------------------------------------------------- sync wrapper


class SyncEnvironment:
    """The same API without async, for simple loops: its own event loop and pool, in a thread.

        with SyncEnvironment(task) as env:
            obs, info = env.reset(seed=0)
            env.step(Shell(command="ls"))
            print(env.verify().reward)
    """

    def __init__(self, task: Task | str, *, pool_kwargs: dict[str, Any] | None = None,
                 **kwargs: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name="envfactory-sync-env")
        self._thread.start()
        self._pool = Pool(**(pool_kwargs or {"max_live": 2, "spares": 1}))
        self.env = make(task, pool=self._pool, **kwargs)
        self._closed = False

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def reset(self, *, seed: int | None = None,
              rollout_id: str | None = None) -> tuple[Observation, dict[str, Any]]:
        return self._run(self.env.reset(seed=seed, rollout_id=rollout_id))

    def step(self, action: Any) -> StepResult:
        return self._run(self.env.step(action))

    def verify(self, *, timeout: float | None = None) -> VerifyResult:
        return self._run(self.env.verify(timeout=timeout))

    def state(self) -> EnvState:
        return self.env.state()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._run(self.env.close())
            self._run(self._pool.close())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=30)
            self._loop.close()

    def __enter__(self) -> SyncEnvironment:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
