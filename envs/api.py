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
"""

from __future__ import annotations

import asyncio
import re
import shlex
import threading
import time
import uuid
import weakref
from collections.abc import Coroutine
from typing import Any, Literal, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field

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
from envs.errors import UnknownName
from envs.models import FailureKind, SWETask, TerminalTask
from envs.pool import Pool, Recipe, ResetMode
from envs.sandbox import GIT as _GIT
from envs.sandbox import DiffError, Sandbox, SandboxDied, SandboxError
from envs.verify import (
    DETERMINISM_ENV,
    VerifyResult,
    agent_diff,
    failed,
    grading_diff,
    last_line,
    verify_swe,
    verify_terminal,
    workdir_of,
)

T = TypeVar("T")
Task = Union[SWETask, TerminalTask]

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


class EpisodeError(SandboxError):
    """The episode cannot go on (no reset yet, already over, the environment is missing)."""

    def __init__(self, message: str, failure: FailureKind = FailureKind.NONE) -> None:
        super().__init__(message)
        self.failure = failure


def _cap(text: str, limit: int = OBS_LIMIT) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - limit} characters cut ...]\n{text[-half:]}"


def task_id_of(task: Task) -> str:
    return task.instance_id if isinstance(task, SWETask) else task.task_id


# --------------------------------------------------------------------------- task kinds


class _Kind:
    """What differs between SWE and terminal tasks; all methods but prompt() block."""

    kind: Literal["swe", "terminal"]
    default_mode: ResetMode
    verify_timeout: float
    agent_timeout: float | None = None

    def recipe(self, mode: ResetMode) -> Recipe:
        raise NotImplementedError

    def prompt(self) -> str:
        raise NotImplementedError

    def verify(self, sb: Sandbox, timeout: float, mutated: bool,
               command: str | None) -> VerifyResult:
        raise NotImplementedError

    # Kinds that grade in a fresh sandbox: the agent's changes, read in its own sandbox...
    grades_fresh = False

    def changes(self, sb: Sandbox) -> str:
        raise NotImplementedError

    # ...then carried into a clean one of the same image, and graded there.
    def grade(self, sb: Sandbox, changes: str, timeout: float,
              command: str | None) -> VerifyResult:
        raise NotImplementedError

    def solve(self, sb: Sandbox) -> None:
        """Apply the reference solution (for check_env)."""
        raise NotImplementedError

    def fingerprint(self, sb: Sandbox) -> str:
        raise NotImplementedError


class _SWE(_Kind):
    kind = "swe"
    default_mode = ResetMode.RESTORE

    def __init__(self, task: SWETask) -> None:
        if task.env_spec is None or not task.env_spec.image:
            raise EpisodeError(f"task {task.instance_id} has no built environment image",
                               FailureKind.ENV_COLLAPSE)
        self.task, self.spec = task, task.env_spec
        self.verify_timeout = self.spec.limits.timeout
        self.commit = self.spec.checkout or task.base_commit

    def recipe(self, mode: ResetMode) -> Recipe:
        from envs.instance import checkout_script

        return Recipe.make(
            self.spec.image or "", workdir=self.spec.workdir, network=self.spec.network,
            limits=self.spec.limits, env={**DETERMINISM_ENV, **self.spec.env},
            labels={"envfactory.instance": self.task.instance_id[:60]},
            setup=checkout_script(self.spec.checkout) if self.spec.checkout else "",
            reset_mode=mode, restore_commit=self.commit)

    def prompt(self) -> str:
        t = self.task
        text = f"Repository {t.repo}, checked out at {self.spec.workdir}.\n\n{t.problem_statement}"
        if t.hints_text.strip():
            text += f"\n\nHints:\n{t.hints_text}"
        return text

    def verify(self, sb: Sandbox, timeout: float, mutated: bool,
               command: str | None) -> VerifyResult:
        sb.kill_all()  # the agent's background processes do not run beside the tests
        return verify_swe(sb, self.task, self.spec, commit=self.commit, changed=mutated,
                          timeout=timeout, command=command)

    grades_fresh = True

    def changes(self, sb: Sandbox) -> str:
        sb.kill_all()  # nothing of the agent's keeps writing while its changes are read
        return agent_diff(sb, self.commit, self.spec.workdir)

    def grade(self, sb: Sandbox, changes: str, timeout: float,
              command: str | None) -> VerifyResult:
        """SWE-bench's way: the agent's code changes (test and test-harness files left out)
        applied to a clean checkout, the hidden tests run there. Whatever the agent did to
        its own container (daemons, PATH shims, caches, /tmp, the git history) is not here."""
        graded, dropped = grading_diff(changes, self.task)
        changed = bool(graded.strip())
        if changed:
            res = sb.apply_patch(graded)
            if not res.applied:
                return failed(FailureKind.MODEL, "the agent's changes do not apply to a clean "
                              f"checkout: {res.reason}")
        verdict = verify_swe(sb, self.task, self.spec, commit=self.commit, changed=changed,
                             timeout=timeout, command=command)
        if dropped:
            note = f"; not graded (tests and test harness): {', '.join(dropped[:5])}"
            verdict = verdict.model_copy(update={"reason": verdict.reason + note})
        return verdict

    def solve(self, sb: Sandbox) -> None:
        res = sb.apply_patch(self.task.patch)
        if not res.applied:
            raise SandboxError(f"the reference patch did not apply: {res.reason}")

    def fingerprint(self, sb: Sandbox) -> str:
        res = sb.exec(f"{_GIT} rev-parse HEAD; {_GIT} status --porcelain --untracked-files=all;"
                      f" {_GIT} diff HEAD | sha256sum", timeout=60)
        return res.stdout


class _Terminal(_Kind):
    kind = "terminal"
    default_mode = ResetMode.RECREATE

    def __init__(self, task: TerminalTask) -> None:
        self.task = task
        self.verify_timeout = task.verifier_timeout_sec
        self.agent_timeout = task.agent_timeout_sec
        self.workdir = workdir_of(task.dockerfile)
        self._image = task.image

    def image(self) -> str:
        if self._image is None:
            from envs import images

            name = "task-" + re.sub(r"[^a-z0-9._-]+", "-", self.task.task_id.lower())[:60]
            files = {p: t.encode() for p, t in self.task.files.items()}
            try:
                self._image = images.build_context(name, self.task.dockerfile, files,
                                                   kind="task", log=lambda _m: None)
            except images.ImageBuildError as exc:
                raise EpisodeError(str(exc), FailureKind.BUILD_FAILED) from exc
        return self._image

    def recipe(self, mode: ResetMode) -> Recipe:
        return Recipe.make(self.image(), workdir=self.workdir, network=self.task.network,
                           env=DETERMINISM_ENV,
                           labels={"envfactory.task": self.task.task_id[:60]}, reset_mode=mode)

    def prompt(self) -> str:
        return self.task.instruction

    def verify(self, sb: Sandbox, timeout: float, mutated: bool,
               command: str | None) -> VerifyResult:
        # No kill_all here (unlike SWE): a terminal task may be "start this service", and
        # its tests then talk to what the agent left running.
        return verify_terminal(sb, self.task, timeout=timeout, command=command)

    def solve(self, sb: Sandbox) -> None:
        sb.put_file("/solution/solve.sh", self.task.solution, mode=0o755)
        res = sb.exec("bash /solution/solve.sh", timeout=self.task.agent_timeout_sec)
        if res.exit_code != 0:
            raise SandboxError(f"the reference solution failed (exit {res.exit_code}): "
                               f"{last_line(res.output)}")

    def fingerprint(self, sb: Sandbox) -> str:
        wd = shlex.quote(self.workdir)
        prune = "\\( -path /proc -o -path /sys -o -path /dev -o -path /tmp \\) -prune -o"
        res = sb.exec(f"find {wd} -xdev -maxdepth 4 {prune} -type f -print 2>/dev/null | "
                      "LC_ALL=C sort | head -n 5000 | xargs -r -d '\\n' sha256sum 2>/dev/null",
                      timeout=120, max_output=8 << 20)
        return res.stdout


def _kind_for(task: Task) -> _Kind:
    return _SWE(task) if isinstance(task, SWETask) else _Terminal(task)


# --------------------------------------------------------------------------- the environment


_DEFAULT_POOLS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Pool] = \
    weakref.WeakKeyDictionary()


def prompt_of(task: Task) -> str:
    """The user prompt an episode of this task starts with (reset's observation)."""
    return _kind_for(task).prompt()


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
        self._kind = _kind_for(task)
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
