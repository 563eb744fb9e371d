"""`envfactory serve`: the episode API (envs/api.py) over HTTP and WebSocket, in the OpenEnv
protocol, built with the `openenv` package itself (`create_app`, `MCPEnvironment`), so OpenEnv
clients (`GenericEnvClient`, `MCPToolClient`) work unchanged; `envs.make(task_id, remote=URL)`
is the thin envfactory client (envs/remote.py).

    envfactory serve --port 8000 --token $ENVFACTORY_SERVE_TOKEN --max-live 16 --per-client 32

What a client sees:
- One WebSocket session (`/ws`) is one environment: `reset(task_id=..., seed=..., episode_id=...,
  options={...Environment kwargs})` starts an episode of any task in the server's registry;
  `step(action)` takes whatever `envs.actions.parse_action` takes, flat (`{"type": "shell",
  "command": "ls"}`) or under `action`; `step({"control": "verify"})` grades (the trainer's
  call, never one of the agent's tools); `state()`; MCP `tools/list` and `tools/call` give the
  same actions as tools (shell, read_file, write_file, apply_patch, submit). Episodes started
  without options verify on submit (`auto_verify`), so the OpenEnv `done` step carries the reward.
- Auth: every route but `/health` needs `Authorization: Bearer <token>`; a WebSocket handshake
  without it is refused with HTTP 401, before any environment is made.
- Per-client cap: a client (the `X-Client-Id` header, else its address) holds at most
  `per_client` WebSocket sessions; the next handshake is refused with HTTP 429. A session holds
  at most one sandbox, so this caps its live episodes. (The header is trusted: the cap keeps a
  runaway trainer from taking the pool, it is no security boundary; the token is.)
- Back-pressure: at most `max_live` episodes hold a sandbox. A reset beyond that waits, first
  come first served, up to `queue_timeout` seconds with at most `max_waiting` waiters; then it is
  refused with an error whose message starts `envfactory:503:` (the session stays usable). Past
  `max_sessions` open sessions OpenEnv itself refuses a new one (CAPACITY_REACHED).
- Errors travel as OpenEnv error frames; their message is `envfactory:<status>:<failure>: text`
  (envs/remote.py turns them back into EpisodeError / RemoteRefused / KeyError).

HTTP `/reset` and `/step` are OpenEnv's stateless per-request routes: a `/reset` makes an
episode and drops it; anything stateful goes through the WebSocket.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import threading
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import Any, Literal

from fastmcp import FastMCP
from fastmcp.tools import Tool as MCPTool
from fastmcp.tools.base import ToolResult
from openenv.core.env_server import Action, MCPEnvironment, Observation, State, create_app
from openenv.core.env_server.mcp_types import CallToolAction, ListToolsAction
from pydantic import ConfigDict, Field, PrivateAttr
from pydantic_core import to_jsonable_python

from envs.actions import tools
from envs.api import Environment, EpisodeError, StepResult, Task, resolve_task, task_id_of
from envs.models import FailureKind
from envs.pool import Pool
from envs.remote import error_text

ENV_NAME = "envfactory"
OPEN_PATHS = frozenset({"/health"})  # load balancers probe it without a token
SESSION_PATHS = frozenset({"/ws", "/mcp"})  # WebSocket routes that open a session
CLIENT_HEADER = "x-client-id"
ENV_OPTIONS = frozenset({"max_steps", "step_timeout", "verify_timeout", "reset_mode",
                         "auto_verify", "fresh_grading"})
# OpenEnv clients read the reward off the `done` step, so a bare reset verifies on submit.
DEFAULT_OPTIONS: dict[str, Any] = {"auto_verify": True}


# --------------------------------------------------------------------------- wire types


class EpisodeAction(Action):
    """One step. Either `action` (anything parse_action takes: an action dict, a tool call,
    JSON, shell text) or the action's own fields flat; or `control="verify"` to grade."""

    model_config = ConfigDict(extra="allow", validate_assignment=True)

    action: Any = Field(default=None, description="an action as envs.actions.parse_action "
                        "takes it; omitted: the flat extra fields are the action")
    control: Literal["verify"] | None = Field(default=None, description="verify: run the "
                                              "hidden tests and grade (ends the episode)")
    verify_timeout: float | None = Field(default=None, gt=0, description="seconds for verify")


class EpisodeObservation(Observation):
    """What reset, step and verify return; `done` is terminated or truncated."""

    text: str = ""
    messages: list[dict[str, Any]] = Field(default_factory=list)
    terminated: bool = False
    truncated: bool = False
    info: dict[str, Any] = Field(default_factory=dict)
    verdict: dict[str, Any] | None = Field(default=None, description="verify's VerifyResult")
    state: dict[str, Any] = Field(default_factory=dict, description="the EnvState after it")


class EpisodeState(State):
    """envs.api.EnvState in OpenEnv's State (episode_id is the rollout id)."""

    task_id: str | None = None
    kind: str | None = None
    seed: int | None = None
    elapsed_s: float = 0.0
    terminated: bool = False
    truncated: bool = False
    failure: str = FailureKind.NONE.value
    sandbox_id: str | None = None


# --------------------------------------------------------------------------- admission


class Gate:
    """At most `limit` live episodes (each holds a sandbox); the rest wait FIFO, at most
    `max_waiting` of them and `wait_s` each. Waiting here, not in Pool.acquire, because a
    cancelled acquire can leave a sandbox starting in the executor; a cancelled wait cannot."""

    def __init__(self, limit: int, wait_s: float, max_waiting: int) -> None:
        self.limit, self.wait_s, self.max_waiting = limit, wait_s, max_waiting
        self.live = 0
        self.refused = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def waiting(self) -> int:
        return sum(1 for f in self._waiters if not f.done())

    async def enter(self) -> None:
        if self.live < self.limit and not self.waiting:
            self.live += 1
            return
        if self.waiting >= self.max_waiting:
            self.refused += 1
            raise RuntimeError(error_text(503, FailureKind.NONE, f"pool full: {self.live} live "
                                          f"episodes and {self.waiting} waiting; retry later"))
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await asyncio.wait([fut], timeout=self.wait_s)
        except asyncio.CancelledError:
            if fut.done():  # the slot was handed over as we were cancelled: pass it on
                self.leave()
            else:
                fut.cancel()
            raise
        if fut.done():
            return  # leave() handed its slot to us; `live` did not change
        fut.cancel()
        self.refused += 1
        raise RuntimeError(error_text(503, FailureKind.NONE, f"pool full: no sandbox within "
                                      f"{self.wait_s:g}s ({self.live} live episodes); retry later"))

    def leave(self) -> None:
        while self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_result(None)
                return
        self.live -= 1


class Hub:
    """What all sessions share: the pool, the gate, resolved tasks, per-client sessions."""

    def __init__(self, *, max_live: int, per_client: int, queue_timeout: float,
                 max_waiting: int, tasks: list[Task] | None = None,
                 pool_kwargs: Mapping[str, Any] | None = None) -> None:
        self.max_live, self.per_client = max_live, per_client
        self.gate = Gate(max_live, queue_timeout, max_waiting)
        self.sessions: Counter[str] = Counter()
        self._tasks: dict[str, Task] = {task_id_of(t): t for t in tasks or []}
        self._pool_kwargs = dict(pool_kwargs or {})
        self.pool: Pool | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._bg: set[asyncio.Task[Any]] = set()

    async def start(self) -> None:
        # The pool belongs to the loop it is used on: the server's.
        self.loop = asyncio.get_running_loop()
        self.pool = Pool(max_live=self.max_live, **self._pool_kwargs)

    async def stop(self) -> None:
        if self._bg:
            await asyncio.gather(*list(self._bg), return_exceptions=True)
        if self.pool is not None:
            await self.pool.close()

    def spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._bg.add(task)
        task.add_done_callback(self._bg.discard)

    async def task(self, task_id: str) -> Task:
        found = self._tasks.get(task_id)
        if found is None:
            assert self.pool is not None
            try:  # the registry blocks (SQLAlchemy, Alembic on open): off the loop
                found = await self.pool.run(resolve_task, task_id)
            except KeyError:  # LookupError: its str() is the message, KeyError's is a repr
                raise LookupError(error_text(404, FailureKind.NONE,
                                          f"no task {task_id!r} in the registry")) from None
            self._tasks[task_id] = found
        return found

    def status(self) -> dict[str, Any]:
        pool = self.pool.metrics().model_dump() if self.pool is not None else None
        return {"live_episodes": self.gate.live, "waiting": self.gate.waiting,
                "refused": self.gate.refused, "max_live": self.max_live,
                "per_client": self.per_client, "sessions": dict(self.sessions), "pool": pool}


# --------------------------------------------------------------------------- MCP tools


class _ActionTool(MCPTool):
    """One envfactory action as an MCP tool; its schema is envs.actions.tools()'s."""

    _act: Callable[[dict[str, Any]], Awaitable[str]] = PrivateAttr()

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        text = await self._act({**arguments, "type": self.name})
        return ToolResult(content=text, structured_content={"result": text})


# the wrap marker makes MCP clients give back the text itself, not {"result": text}
_TEXT_RESULT = {"type": "object", "properties": {"result": {"type": "string"}},
                "required": ["result"], "x-fastmcp-wrap-result": True}


def _mcp_server(act: Callable[[dict[str, Any]], Awaitable[str]]) -> FastMCP:
    server = FastMCP(ENV_NAME)
    for spec in tools():
        fn = spec["function"]
        tool = _ActionTool(name=fn["name"], description=fn["description"],
                           parameters=fn["parameters"], output_schema=_TEXT_RESULT)
        tool._act = act
        server.add_tool(tool)
    return server


# --------------------------------------------------------------------------- the environment


def _jsonable(value: Any) -> Any:
    return to_jsonable_python(value, fallback=str)


class EpisodeEnv(MCPEnvironment):
    """One OpenEnv session: an envs.api.Environment (remade when the task changes) on the
    hub's pool. Everything runs on the server's loop; only close() comes from a thread."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, hub: Hub) -> None:
        self._hub = hub
        self._env: Environment | None = None
        self._opts: dict[str, Any] = {}
        self._admitted = False
        self._last: StepResult | None = None
        super().__init__(_mcp_server(self._tool_step))

    # ---------------------------------------------------------------- helpers

    def _require(self) -> Environment:
        if self._env is None:
            raise EpisodeError(error_text(409, FailureKind.NONE,
                                          "call reset(task_id=...) before step()"))
        return self._env

    async def _release(self, env: Environment | None, admitted: bool) -> None:
        try:
            if env is not None:
                await env.close()
        finally:
            if admitted:
                self._hub.gate.leave()

    def _observe(self, res: StepResult | None = None, *, text: str = "",
                 messages: list[dict[str, Any]] | None = None, info: dict[str, Any] | None = None,
                 verdict: Any = None, done: bool = False,
                 reward: float | None = None) -> EpisodeObservation:
        state = self._env.state().model_dump(mode="json") if self._env else {}
        if res is not None:
            return EpisodeObservation(
                text=res.observation.text, messages=list(res.observation.messages),
                terminated=res.terminated, truncated=res.truncated, info=_jsonable(res.info),
                verdict=_jsonable(res.info.get("verdict")), state=state,
                done=res.terminated or res.truncated, reward=res.reward)
        return EpisodeObservation(text=text, messages=messages or [], info=_jsonable(info or {}),
                                  verdict=_jsonable(verdict), state=state, done=done,
                                  terminated=done, reward=reward)

    # ---------------------------------------------------------------- OpenEnv API

    async def reset_async(self, seed: int | None = None, episode_id: str | None = None,
                          task_id: str | None = None, options: dict[str, Any] | None = None,
                          **kwargs: Any) -> EpisodeObservation:
        if not task_id:
            raise ValueError(error_text(400, FailureKind.NONE, "reset needs task_id=<a task "
                                        "id in the server's registry>"))
        bad = set(options or {}) - ENV_OPTIONS
        if bad:
            raise ValueError(error_text(400, FailureKind.NONE, f"unknown options {sorted(bad)};"
                                        f" known: {sorted(ENV_OPTIONS)}"))
        opts = dict(DEFAULT_OPTIONS) if options is None else dict(options)
        hub = self._hub
        assert hub.pool is not None
        if self._env is None or self._env.task_id != task_id or opts != self._opts:
            old, self._env = self._env, None
            if old is not None:
                await old.close()
            self._env = Environment(await hub.task(task_id), pool=hub.pool, **opts)
            self._opts = opts
        if not self._admitted:
            await hub.gate.enter()
            self._admitted = True
        self._last = None
        try:
            obs, info = await self._env.reset(seed=seed, rollout_id=episode_id)
        except EpisodeError as exc:
            # no sandbox is held after a failed reset: free the admission for others
            self._admitted = False
            hub.gate.leave()
            failure = getattr(exc, "failure", FailureKind.ENV_COLLAPSE)
            raise EpisodeError(error_text(500, failure, str(exc)), failure) from None
        return self._observe(text=obs.text, messages=list(obs.messages), info=info)

    def reset(self, seed: int | None = None, episode_id: str | None = None,
              **kwargs: Any) -> EpisodeObservation:
        return self._sync(self.reset_async(seed=seed, episode_id=episode_id, **kwargs))

    async def step_async(self, action: Action, timeout_s: float | None = None,
                         **kwargs: Any) -> Observation:
        mcp = _mcp_action(action)
        if mcp is not None:
            return await self._mcp_step(mcp, timeout_s)
        assert isinstance(action, EpisodeAction)
        env = self._require()
        if action.control == "verify":
            verdict = await env.verify(timeout=action.verify_timeout)
            return self._observe(text=verdict.reason or verdict.failure.value, verdict=verdict,
                                 done=True, reward=verdict.reward)
        raw = action.action
        if raw is None:
            raw = {k: v for k, v in (action.model_extra or {}).items()}
        try:
            res = await env.step(raw)
        except EpisodeError as exc:
            raise EpisodeError(error_text(409, exc.failure, str(exc)), exc.failure) from None
        self._last = res
        return self._observe(res)

    def _step_impl(self, action: Action, timeout_s: float | None = None,
                   **kwargs: Any) -> Observation:
        return self._sync(self.step_async(action, timeout_s))

    async def _mcp_step(self, action: Action, timeout_s: float | None) -> Observation:
        # MCPEnvironment times tool calls out at 30 s; a shell step may take step_timeout,
        # a submit with auto_verify the verify timeout too.
        env = self._env
        limit = timeout_s or ((env.step_timeout + env.verify_timeout + 60) if env else 60)
        self._last = None
        obs = await super().step_async(action, timeout_s=limit)
        if self._last is not None:  # a tool ran a step: OpenEnv's done and reward follow it
            obs.done = self._last.terminated or self._last.truncated
            obs.reward = self._last.reward
        return obs

    async def _tool_step(self, raw: dict[str, Any]) -> str:
        res = await self._require().step(raw)
        self._last = res
        return res.observation.text

    @property
    def state(self) -> EpisodeState:
        if self._env is None:
            return EpisodeState()
        s = self._env.state()
        return EpisodeState(episode_id=s.rollout_id, step_count=s.step_count, task_id=s.task_id,
                            kind=s.kind, seed=s.seed, elapsed_s=s.elapsed_s,
                            terminated=s.terminated, truncated=s.truncated,
                            failure=s.failure.value, sandbox_id=s.sandbox_id)

    def close(self) -> None:
        """OpenEnv calls this from the session's executor thread (or, for its per-request
        routes, on the loop): hand the sandbox and the admission back on the server's loop."""
        env, self._env = self._env, None
        admitted, self._admitted = self._admitted, False
        loop = self._hub.loop
        if (env is not None or admitted) and loop is not None and not loop.is_closed():
            coro = self._release(env, admitted)
            if _on_loop(loop):
                self._hub.spawn(coro)
            else:
                asyncio.run_coroutine_threadsafe(coro, loop).result(timeout=300)
        super().close()

    def _sync(self, coro: Awaitable[Any]) -> Any:
        loop = self._hub.loop
        if loop is None or _on_loop(loop):
            raise RuntimeError("the sync API runs only off the server's loop; use the async one")
        return asyncio.run_coroutine_threadsafe(coro, loop).result()  # type: ignore[arg-type]


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return getattr(loop, "_thread_id", None) == threading.get_ident()


def _mcp_action(action: Action) -> Action | None:
    """MCP actions reach step as EpisodeAction extras (OpenEnv only parses them itself for
    MCP-only action classes)."""
    if isinstance(action, (ListToolsAction, CallToolAction)):
        return action
    extra = action.model_extra or {}
    if extra.get("type") == "list_tools":
        return ListToolsAction()
    if extra.get("type") == "call_tool":
        return CallToolAction(tool_name=extra.get("tool_name", ""),
                              arguments=extra.get("arguments") or {})
    return None


# --------------------------------------------------------------------------- auth and caps


class Guard:
    """ASGI middleware: the bearer token on every route but /health, and the per-client cap
    on session WebSockets, both decided at the handshake (401 / 429) before OpenEnv makes an
    environment."""

    def __init__(self, app: Any, hub: Hub, token: str) -> None:
        self.app, self.hub = app, hub
        self._token = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        if scope["path"] not in OPEN_PATHS and not hmac.compare_digest(
                headers.get(b"authorization", b""), self._token):
            await _deny(scope, receive, send, 401, "missing or wrong bearer token")
            return
        if kind != "websocket" or scope["path"] not in SESSION_PATHS:
            await self.app(scope, receive, send)
            return
        client = headers.get(CLIENT_HEADER.encode(), b"").decode("latin-1") or \
            (scope.get("client") or ("?",))[0]
        sessions = self.hub.sessions
        if sessions[client] >= self.hub.per_client:
            await _deny(scope, receive, send, 429, f"client {client!r} already holds "
                        f"{sessions[client]} sessions (cap {self.hub.per_client})")
            return
        sessions[client] += 1
        try:
            await self.app(scope, receive, send)
        finally:
            sessions[client] -= 1
            if sessions[client] <= 0:
                del sessions[client]


async def _deny(scope: dict[str, Any], receive: Any, send: Any, status: int,
                message: str) -> None:
    body = json.dumps({"detail": message, "status": status}).encode()
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        head.append((b"www-authenticate", b"Bearer"))
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": status, "headers": head})
        await send({"type": "http.response.body", "body": body})
        return
    await receive()  # websocket.connect
    if "websocket.http.response" in (scope.get("extensions") or {}):
        await send({"type": "websocket.http.response.start", "status": status, "headers": head})
        await send({"type": "websocket.http.response.body", "body": body})
    else:  # servers without the denial extension: a policy close (HTTP 403 at the handshake)
        await send({"type": "websocket.close", "code": 1008, "reason": message[:120]})


# --------------------------------------------------------------------------- app and server


def build_app(*, token: str, max_live: int = 8, per_client: int = 16,
              queue_timeout: float = 30.0, max_waiting: int | None = None,
              max_sessions: int | None = None, idle_timeout: float | None = 900.0,
              tasks: list[Task] | None = None,
              pool_kwargs: Mapping[str, Any] | None = None) -> Any:
    """The ASGI app: OpenEnv's FastAPI app for EpisodeEnv, behind Guard."""
    from openenv.core.env_server import ConcurrencyConfig

    if not token:
        raise ValueError("serve needs a token (--token or ENVFACTORY_SERVE_TOKEN)")
    waiting = 4 * max_live if max_waiting is None else max_waiting
    hub = Hub(max_live=max_live, per_client=per_client, queue_timeout=queue_timeout,
              max_waiting=waiting, tasks=tasks, pool_kwargs=pool_kwargs)
    app = create_app(
        partial(EpisodeEnv, hub), EpisodeAction, EpisodeObservation, env_name=ENV_NAME,
        concurrency_config=ConcurrencyConfig(
            max_concurrent_envs=max_sessions or max_live + waiting,
            session_timeout=idle_timeout),
        state_cls=EpisodeState)
    app.router.on_startup.insert(0, hub.start)
    app.router.on_shutdown.append(hub.stop)

    @app.get("/envfactory/status", tags=["Health"])
    async def status() -> dict[str, Any]:
        """Live and waiting episodes, sessions per client, the pool's metrics."""
        return hub.status()

    app.state.hub = hub
    return Guard(app, hub, token)


def serve(host: str = "127.0.0.1", port: int = 8000, *, token: str, max_live: int = 8,
          per_client: int = 16, queue_timeout: float = 30.0, max_waiting: int | None = None,
          max_sessions: int | None = None, idle_timeout: float | None = 900.0,
          tasks: list[Task] | None = None, pool_kwargs: Mapping[str, Any] | None = None,
          log_level: str = "warning") -> None:
    """Run the server until interrupted (SIGINT/SIGTERM close every sandbox first)."""
    import uvicorn

    app = build_app(token=token, max_live=max_live, per_client=per_client,
                    queue_timeout=queue_timeout, max_waiting=max_waiting,
                    max_sessions=max_sessions, idle_timeout=idle_timeout, tasks=tasks,
                    pool_kwargs=pool_kwargs)
    # the handshake's own limits are ours (Guard); uvicorn's ping finds dead peers
    uvicorn.run(app, host=host, port=port, log_level=log_level, ws_ping_interval=20.0,
                ws_ping_timeout=60.0, timeout_graceful_shutdown=30)

