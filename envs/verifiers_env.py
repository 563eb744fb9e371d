"""envfactory tasks as a `verifiers` (>= 0.4, `verifiers.v1`) environment.

    import verifiers.v1 as vf
    from envs.verifiers_env import load_environment

    env = load_environment(tasks=["add-numbers"], max_steps=20)      # a vf.Env
    # or, once the `envfactory` package exports this plugin:  vf-eval envfactory ...

verifiers 0.4 resolves an environment by taskset id: `vf.load_environment(EnvConfig)` imports
the module named by `env.taskset.id` and takes the `Taskset`, `Harness` and `Env` subclasses
it exports through `__all__`. This module is such a plugin:

- `EnvfactoryTaskset` yields one `EnvfactoryTask` per registry task (SWE or terminal); the
  prompt is the episode's first observation.
- `EnvfactoryTask.setup` opens an envfactory episode (`envs.make` + `reset`) for the rollout,
  `finalize` runs `verify()`, its `@vf.reward` is the verdict's reward. An infrastructure
  verdict (reward None) is raised as `vf.SandboxError`: verifiers then records the rollout as
  failed (`trace.ok` False, retryable by `--env.retries`) instead of scoring it 0.
- `EnvfactoryHarness` is the agent loop, run in-process (verifiers allows this as long as
  every model call goes through the rollout's interception endpoint): the chat model gets the
  episode's tools (`envs.actions.tools()`), each tool call is one `Environment.step`. Its
  `cleanup`, which verifiers runs on every path, closes the episode.
- `EnvfactoryEnv` is the single-agent env with a local (subprocess) runtime, since the
  sandbox is envfactory's own container, and owns the episodes' `Pool` while it serves.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Any

import verifiers.v1 as vf

from envs.actions import SYSTEM_PROMPT, tools
from envs.api import Environment, EpisodeError, make, prompt_of, resolve_task, task_id_of
from envs.models import FailureKind
from envs.pool import Pool

log = logging.getLogger(__name__)

TASKSET_ID = "envfactory"
"""The id verifiers imports (`--env.taskset.id`, `vf-eval <id>`): a top-level module that
re-exports `__all__` below (see the package note in this module's report)."""


# --------------------------------------------------------------------------- configs


class EnvfactoryTaskConfig(vf.TaskConfig):
    """Per-episode knobs (`--env.taskset.task.*`)."""

    max_steps: int = 30
    """Tool calls an episode may take before it is truncated (and then verified)."""
    step_timeout: float = 120.0
    """Seconds one shell action may run."""
    verify_timeout: float | None = None
    """Seconds the hidden tests may run; None: the task's own limit."""


class EnvfactoryTasksetConfig(vf.TasksetConfig):
    """Which registry tasks load (`--env.taskset.*`)."""

    tasks: list[str] = []
    """Registry task ids (SWE instance ids or terminal task ids); empty: every task."""
    kind: str | None = None
    """With `tasks` empty: only "swe" or only "terminal" tasks."""
    task: EnvfactoryTaskConfig = EnvfactoryTaskConfig()


class EnvfactoryEnvConfig(vf.SingleAgentEnvConfig):
    """The single seat, on the local runtime: the agent's box is envfactory's sandbox, so the
    harness itself needs no remote one (verifiers' default runtime is a Prime sandbox)."""

    agent: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())
    pool_max_live: int = 8
    """Live envfactory sandboxes at most (the episodes' `Pool`)."""
    pool_spares: int = 0
    """Warm spare sandboxes per image."""


# --------------------------------------------------------------------------- episodes


@dataclass
class _Episode:
    env: Environment
    max_steps: int


# trace id -> the rollout's live episode: verifiers hands the task and the harness the same
# trace, not a shared object, so this is where the two meet.
_EPISODES: dict[str, _Episode] = {}
# event loop -> the pool EnvfactoryEnv serves with (one loop may run several evals in turn)
_POOLS: dict[asyncio.AbstractEventLoop, Pool] = {}


def _pool() -> Pool | None:
    return _POOLS.get(asyncio.get_running_loop())


async def close_episode(trace_id: str) -> None:
    """Give a rollout's sandbox back; idempotent (finalize and cleanup both call it)."""
    episode = _EPISODES.pop(trace_id, None)
    if episode is not None:
        await episode.env.close()


def live_episodes() -> list[str]:
    """Trace ids whose episode is still open (a leak check for tests)."""
    return list(_EPISODES)


# --------------------------------------------------------------------------- task + taskset


class EnvfactoryTaskData(vf.TaskData):
    kind: str
    """"swe" or "terminal"."""


class EnvfactoryState(vf.State):
    reward: float | None = None
    failure: str = FailureKind.NONE.value
    reason: str = ""
    resolved: bool = False
    steps: int = 0


class EnvfactoryTask(vf.Task[EnvfactoryTaskData, EnvfactoryState, EnvfactoryTaskConfig]):
    """One envfactory task; an episode per rollout, graded by the task's hidden tests."""

    async def setup(self, trace: vf.Trace) -> None:
        assert self.data.id is not None
        env = make(self.data.id, pool=_pool(), max_steps=self.config.max_steps,
                   step_timeout=self.config.step_timeout,
                   verify_timeout=self.config.verify_timeout)
        # Registered before reset so cleanup closes it even when reset fails.
        _EPISODES[trace.id] = _Episode(env, self.config.max_steps)
        try:
            await env.reset(rollout_id=trace.id)
        except EpisodeError as exc:
            # No sandbox (image missing, engine down): infrastructure, not the task's fault.
            raise vf.SandboxError(f"envfactory reset: {exc}") from exc

    async def finalize(self, trace: vf.Trace) -> None:
        episode = _EPISODES.get(trace.id)
        if episode is None:
            raise vf.SandboxError(f"no envfactory episode for rollout {trace.id}")
        try:
            verdict = await episode.env.verify()
            state = episode.env.state()
        finally:
            await close_episode(trace.id)
        trace.state.reward = verdict.reward
        trace.state.failure = verdict.failure.value
        trace.state.reason = verdict.reason or ""
        trace.state.resolved = bool(verdict.resolved)
        trace.state.steps = state.step_count
        if verdict.reward is None:
            # No signal about the policy: a failed rollout, never a silent 0.
            raise vf.SandboxError(f"envfactory verify: {verdict.failure.value}: "
                                  f"{verdict.reason or 'no reward'}")

    @vf.reward
    async def solved(self, trace: vf.Trace) -> float:
        """The hidden tests' verdict (1.0 resolved); finalize already failed a None."""
        reward = trace.state.reward
        if reward is None:
            raise ValueError("no verdict: the episode was not verified")
        return float(reward)

    @vf.metric
    async def steps(self, trace: vf.Trace) -> float:
        return float(trace.state.steps)


class EnvfactoryTaskset(vf.Taskset[EnvfactoryTask, EnvfactoryTasksetConfig]):
    """Registry tasks (`envs.registry.Registry`, `ENVFACTORY_*` settings) as verifiers tasks."""

    def load(self) -> list[EnvfactoryTask]:
        from envs.registry import Registry

        with Registry() as reg:
            if self.config.tasks:
                found = [resolve_task(ident, reg) for ident in self.config.tasks]
            else:
                found = []
                if self.config.kind in (None, "swe"):
                    found += reg.list_swe_tasks()
                if self.config.kind in (None, "terminal"):
                    found += reg.list_terminal_tasks()
        out = []
        for task in found:
            data = EnvfactoryTaskData(id=task_id_of(task), name=task_id_of(task),
                                      kind="swe" if hasattr(task, "instance_id") else "terminal",
                                      prompt=prompt_of(task), system_prompt=SYSTEM_PROMPT)
            out.append(EnvfactoryTask(data, self.config.task))
        return out


# --------------------------------------------------------------------------- harness


class EnvfactoryHarnessConfig(vf.HarnessConfig):
    id: str = TASKSET_ID


class EnvfactoryHarness(vf.Harness[EnvfactoryHarnessConfig]):
    """A tool-calling chat loop over the rollout's envfactory episode, in this process."""

    APPENDS_SYSTEM_PROMPT = True
    # Commands run in envfactory's container, never on this host: no local execution, so no
    # subprocess-runtime warning either.
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False  # the loop itself runs here; the container is the episode's

    async def launch(self, ctx: vf.ModelContext, trace: vf.Trace, runtime: vf.Runtime,
                     endpoint: str, secret: str, mcp_urls: dict[str, str],
                     data: vf.TaskData) -> vf.ProgramResult:
        from openai import AsyncOpenAI

        episode = _EPISODES.get(trace.id)
        if episode is None:
            raise RuntimeError("no envfactory episode: EnvfactoryHarness runs only "
                               "EnvfactoryTask rollouts")
        system, prompt = self.resolve_prompt(data)
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
        messages += ([{"role": "user", "content": prompt}] if isinstance(prompt, str)
                     else [m.model_dump(exclude_none=True) for m in prompt or []])
        schema = tools()
        turns = 0
        # Every model call goes through the interception, which records the trace.
        async with AsyncOpenAI(base_url=endpoint, api_key=secret, max_retries=0) as client:
            while turns < episode.max_steps:
                turns += 1
                reply = await client.chat.completions.create(
                    model=ctx.model, messages=messages, tools=schema)  # type: ignore[arg-type]
                message = reply.choices[0].message
                messages.append(message.model_dump(exclude_none=True))
                if not message.tool_calls:
                    break  # the model answered in text: its turn is over, grading follows
                done = False
                for call in message.tool_calls:
                    res = await episode.env.step(call.model_dump())
                    messages += res.observation.messages
                    if res.terminated or res.truncated:
                        done = True
                        break
                if done:
                    break
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")

    async def cleanup(self, trace: vf.Trace, runtime: vf.Runtime) -> None:
        # verifiers runs cleanup on every path (failed setup, harness error, abort), and skips
        # finalize after a failure: the episode is closed here in those cases.
        await close_episode(trace.id)


# --------------------------------------------------------------------------- env


class EnvfactoryEnv(vf.Env[EnvfactoryEnvConfig]):
    """One agent per episode; owns the Pool the episodes' sandboxes come from."""

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        await agents.agent.run(task)

    async def start(self) -> None:
        pool = Pool(max_live=self.config.pool_max_live, spares=self.config.pool_spares)
        await pool.__aenter__()
        _POOLS[asyncio.get_running_loop()] = pool

    async def stop(self) -> None:
        # stop() runs even after a partial start(), so the pool may be missing.
        pool = _POOLS.pop(asyncio.get_running_loop(), None)
        if pool is not None:
            with contextlib.suppress(Exception):
                await pool.close()


def load_environment(tasks: list[str] | None = None, *, kind: str | None = None,
                     max_steps: int = 30, step_timeout: float = 120.0,
                     verify_timeout: float | None = None, taskset_id: str = TASKSET_ID,
                     **env_args: Any) -> vf.Env:
    """The verifiers environment over registry tasks (`tasks` ids; none: all, or all of
    `kind`). `env_args` are more `EnvfactoryEnvConfig` fields (agent, pool_max_live, ...)."""
    config = vf.resolve_env_config({
        **env_args,
        "taskset": {"id": taskset_id, "tasks": list(tasks or []), "kind": kind,
                    "task": {"max_steps": max_steps, "step_timeout": step_timeout,
                             "verify_timeout": verify_timeout}},
    })
    return vf.load_environment(config)


__all__ = ["EnvfactoryEnv", "EnvfactoryHarness", "EnvfactoryTaskset"]
