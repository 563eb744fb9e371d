"""One task's episodes: `Environment` (async reset / step / verify / close, one episode at a
time), what a step returns (`StepResult`) and the episode's state (`EnvState`), and the
default pool of each event loop. `envs.api` is the public face (`make`, the sync wrapper);
what differs per task kind is `envs.episode_kinds`'.
"""

from __future__ import annotations

import asyncio
import time
import uuid
import weakref
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from envs.actions import (
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
from envs.episode_kinds import EpisodeError, Task, kind_for, task_id_of
from envs.models import FailureKind
from envs.pool import Pool, Recipe, ResetMode
from envs.sandbox import DiffError, Sandbox, SandboxDied, SandboxError
from envs.verify import VerifyResult, failed

__all__ = ["OBS_LIMIT", "READ_LIMIT", "EnvState", "Environment", "StepResult", "default_pool",
           "shutdown"]

READ_LIMIT = 1 << 20  # bytes a ReadFile returns at most
OBS_LIMIT = 32 * 1024  # characters of command output an observation keeps (head + tail)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# --------------------------------------------------------------------------- results


class StepResult(_Frozen):
    observation: Observation
    terminated: bool = False  # the episode ended (submit, or the sandbox died)
    truncated: bool = False  # a step or time limit ended it
    reward: float = 0.0  # 0 but on an auto-verified Submit; the reward comes from verify()
    info: dict[str, Any] = Field(default_factory=dict)


class EnvState(_Frozen):
    task_id: str
    kind: Literal["swe", "terminal"]
    rollout_id: str | None
    seed: int | None
    step_count: int
    elapsed_s: float
    terminated: bool
    truncated: bool
    failure: FailureKind
    sandbox_id: str | None


def _cap(text: str, limit: int = OBS_LIMIT) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - limit} characters cut ...]\n{text[-half:]}"


# --------------------------------------------------------------------------- the pools


_DEFAULT_POOLS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Pool] = \
    weakref.WeakKeyDictionary()


def default_pool() -> Pool:
    """The pool of the running event loop (made on first use; close it with shutdown())."""
    loop = asyncio.get_running_loop()
    pool = _DEFAULT_POOLS.get(loop)
    if pool is None:
        pool = _DEFAULT_POOLS[loop] = Pool()
    return pool


async def shutdown() -> None:
    """Close the running loop's default pool."""
    pool = _DEFAULT_POOLS.pop(asyncio.get_running_loop(), None)
    if pool is not None:
        await pool.close()


# --------------------------------------------------------------------------- the environment


class Environment:
    """One task, many episodes (one at a time). Not safe to share between coroutines."""

    def __init__(self, task: Task, *, pool: Pool | None = None, max_steps: int = 100,
                 step_timeout: float = 300.0, verify_timeout: float | None = None,
                 reset_mode: ResetMode | str | None = None, auto_verify: bool = False,
                 fresh_grading: bool = True) -> None:
        self.task = task
        self.auto_verify = auto_verify
        # SWE: grade the agent's diff in a clean sandbox (False: in its own, after kill_all;
        # cheaper, and forgeable by what the agent leaves in its container).
        self.fresh_grading = fresh_grading
        self.task_id = task_id_of(task)
        self._kind = kind_for(task)
        self.kind = self._kind.kind
        self._pool = pool
        self.max_steps = max_steps
        self.step_timeout = step_timeout
        self.verify_timeout = verify_timeout or self._kind.verify_timeout
        self.reset_mode = ResetMode(reset_mode) if reset_mode else self._kind.default_mode
        self._recipe: Recipe | None = None
        self._sb: Sandbox | None = None
        self._rollout_id: str | None = None
        self._seed: int | None = None
        self._steps = 0
        self._t0 = 0.0
        self._terminated = self._truncated = False
        self._mutated = False
        self._failure = FailureKind.NONE
        self._closed = False
        self._verify_command: str | None = None  # check_env plants a hang through this

    @property
    def pool(self) -> Pool:
        if self._pool is None:
            self._pool = default_pool()
        return self._pool

    async def __aenter__(self) -> Environment:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _give_back(self) -> None:
        sb, self._sb = self._sb, None
        if sb is not None:
            await self.pool.release(sb, broken=self._failure is FailureKind.ENV_COLLAPSE)

    async def _ensure_recipe(self) -> Recipe:
        if self._recipe is None:
            try:
                self._recipe = await self.pool.run(self._kind.recipe, self.reset_mode)
            except EpisodeError:
                self._failure = FailureKind.ENV_COLLAPSE
                raise
        return self._recipe

    async def prepare(self, spares: int | None = None) -> None:
        """Build the task's image if needed and start warm spares, before the first reset."""
        await self.pool.prewarm(await self._ensure_recipe(), spares)

    async def reset(self, *, seed: int | None = None, rollout_id: str | None = None,
                    options: dict[str, Any] | None = None) -> tuple[Observation, dict[str, Any]]:
        """Start an episode in a clean sandbox. Raises EpisodeError (with .failure) when the
        environment cannot be made (image missing or unbuildable)."""
        if self._closed:
            raise EpisodeError("the environment is closed")
        t0 = time.monotonic()
        await self._give_back()
        self._steps, self._mutated = 0, False
        self._terminated = self._truncated = False
        self._failure = FailureKind.NONE
        self._seed, self._rollout_id = seed, rollout_id or uuid.uuid4().hex
        recipe = await self._ensure_recipe()
        try:
            self._sb = await self.pool.acquire(recipe)
        except SandboxError as exc:
            self._failure = FailureKind.ENV_COLLAPSE
            raise EpisodeError(f"no sandbox for {self.task_id}: {exc}",
                               FailureKind.ENV_COLLAPSE) from exc
        self._t0 = time.monotonic()
        self.pool.record_reset(self._t0 - t0)
        info = {"task_id": self.task_id, "kind": self.kind, "rollout_id": self._rollout_id,
                "seed": seed, "reset_s": self._t0 - t0}
        return Observation.prompt(self._kind.prompt()), info

    def _live(self) -> Sandbox:
        if self._sb is None:
            raise EpisodeError("call reset() before step()")
        if self._terminated or self._truncated:
            raise EpisodeError("the episode is over; call reset()")
        return self._sb

    def tools(self) -> list[dict[str, Any]]:
        """The actions as OpenAI-style function tools (pass to a chat model's `tools=`)."""
        return tools()

    async def step(self, action: Any) -> StepResult:
        """Act once: an action, a dict, JSON, shell text or a tool call (answered by a `tool`
        message with its id). The agent's mistakes, unreadable output included, are
        observations; a dead sandbox ends the episode. With auto_verify, Submit ends the
        episode graded: the verdict is the step's reward and `info["verdict"]`."""
        sb = self._live()
        call_id = tool_call_id(action)
        self._steps += 1
        info: dict[str, Any] = {"step": self._steps, "failure_kind": FailureKind.NONE}
        if call_id is not None:
            info["tool_call_id"] = call_id
        terminated = False
        try:
            act: AnyAction | None = parse_action(action)
        except ActionError as exc:
            act, text = None, f"[not an action: {exc}]"
            info["failure_kind"] = FailureKind.MODEL
        if act is not None:
            try:
                text = await self.pool.run(self._act, sb, act, info)
            except SandboxError as exc:
                # Died, or an engine error: a live sandbox means the action itself was bad
                # (writing over a directory); a dead one ends the episode.
                if not isinstance(exc, SandboxDied) and await self.pool.run(sb.alive):
                    info["failure_kind"] = FailureKind.MODEL
                    text = f"[the action failed: {exc}]"
                else:
                    self._failure = FailureKind.ENV_COLLAPSE
                    info["failure_kind"] = FailureKind.ENV_COLLAPSE
                    text, terminated = f"[the sandbox died: {exc}]", True
        reward = 0.0
        if isinstance(act, Submit):
            terminated = True
            if self.auto_verify:
                verdict = await self.verify()
                info["verdict"] = verdict
                reward = verdict.reward or 0.0
                text = f"[submitted: {verdict.reason or verdict.failure.value}]"
        truncated = False
        if not terminated:
            over_time = self._kind.agent_timeout is not None and \
                time.monotonic() - self._t0 > self._kind.agent_timeout
            truncated = self._steps >= self.max_steps or over_time
        self._terminated, self._truncated = terminated, truncated
        return StepResult(observation=Observation.result(text, call_id), terminated=terminated,
                          truncated=truncated, reward=reward, info=info)

    def _act(self, sb: Sandbox, act: Any, info: dict[str, Any]) -> str:
        """Blocking: one action in the sandbox (runs in the pool's executor)."""
        if isinstance(act, Shell):
            self._mutated = True  # a command may change anything
            res = sb.exec(act.command, timeout=act.timeout or self.step_timeout)
            info["exit_code"] = res.exit_code
            if res.timed_out:
                info["failure_kind"] = FailureKind.TIMEOUT
                return _cap(res.output) + f"\n[timed out after {act.timeout or self.step_timeout:g}s]"
            if res.exit_code != 0:
                info["failure_kind"] = FailureKind.MODEL
            return _cap(res.output) + f"\n[exit code {res.exit_code}]"
        if isinstance(act, ReadFile):
            try:
                data = sb.get_file(act.path, max_bytes=READ_LIMIT)
            except FileNotFoundError:
                info["failure_kind"] = FailureKind.MODEL
                return f"[no such file: {act.path}]"
            except SandboxDied:
                raise
            except SandboxError as exc:
                info["failure_kind"] = FailureKind.MODEL
                return f"[cannot read {act.path}: {exc}]"
            return data.decode("utf-8", errors="replace")
        if isinstance(act, WriteFile):
            self._mutated = True
            sb.put_file(act.path, act.content)
            return f"[wrote {len(act.content.encode())} bytes to {act.path}]"
        if isinstance(act, ApplyPatch):
            res = sb.apply_patch(act.patch)
            if not res.applied:
                info["failure_kind"] = FailureKind.PATCH_FAILED
                return f"[patch did not apply: {res.reason}]"
            self._mutated = True
            return f"[patch applied ({res.method})]"
        return "[submitted]"

    async def verify(self, *, timeout: float | None = None) -> VerifyResult:
        """Run the hidden tests and grade them; ends the episode."""
        if self._sb is None:
            return failed(FailureKind.ENV_COLLAPSE, "no live episode: reset() did not succeed")
        if self._failure is FailureKind.ENV_COLLAPSE:
            return failed(FailureKind.ENV_COLLAPSE, "the sandbox died during the episode")
        limit = timeout or self.verify_timeout
        try:
            if self._kind.grades_fresh and self.fresh_grading:
                result = await self._verify_fresh(limit)
            else:
                result = await self.pool.run(self._kind.verify, self._sb, limit,
                                             self._mutated, self._verify_command)
        except SandboxDied as exc:
            self._failure = FailureKind.ENV_COLLAPSE
            result = failed(FailureKind.ENV_COLLAPSE, f"the sandbox died: {exc}")
        except SandboxError as exc:
            self._failure = FailureKind.ENV_COLLAPSE
            result = failed(FailureKind.ENV_COLLAPSE, f"the sandbox failed: {exc}")
        except Exception as exc:  # a grader bug is not the policy's fault
            result = failed(FailureKind.VERIFIER_ERROR, f"{type(exc).__name__}: {exc}")
        self._terminated = True
        if result.failure is not FailureKind.NONE and self._failure is FailureKind.NONE:
            self._failure = result.failure
        return result

    async def _verify_fresh(self, limit: float) -> VerifyResult:
        """Read the agent's changes, give its sandbox back, grade them in a clean one."""
        assert self._sb is not None
        try:
            changes = await self.pool.run(self._kind.changes, self._sb)
        except DiffError as exc:  # too large to carry, or git refused: the agent's doing
            return failed(FailureKind.MODEL, f"the agent's changes cannot be graded: {exc}")
        await self._give_back()
        try:
            self._sb = await self.pool.acquire(await self._ensure_recipe())
        except SandboxError as exc:
            return failed(FailureKind.ENV_COLLAPSE, f"no clean sandbox to grade in: {exc}")
        return await self.pool.run(self._kind.grade, self._sb, changes, limit,
                                   self._verify_command)

    async def solve_reference(self) -> None:
        """Apply the task's reference solution in the current episode (for check_env)."""
        sb = self._live()
        self._mutated = True
        await self.pool.run(self._kind.solve, sb)

    async def fingerprint(self) -> str:
        """A digest of the episode's files (check_env compares two resets with it)."""
        return await self.pool.run(self._kind.fingerprint, self._live())

    def state(self) -> EnvState:
        return EnvState(task_id=self.task_id, kind=self.kind, rollout_id=self._rollout_id,
                        seed=self._seed, step_count=self._steps,
                        elapsed_s=time.monotonic() - self._t0 if self._t0 else 0.0,
                        terminated=self._terminated, truncated=self._truncated,
                        failure=self._failure, sandbox_id=self._sb.id if self._sb else None)

    async def close(self) -> None:
        """Give the sandbox back to the pool. Idempotent."""
        if self._closed:
            return
        self._closed = True
        await self._give_back()
