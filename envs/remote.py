"""The thin client of `envfactory serve` (harness/serve.py): `envs.make(task_id, remote=URL)`.

    env = envs.make("envfactory__pyclamp-1", remote="http://trainer-pool:8000", token=TOKEN)
    obs, info = await env.reset(seed=0, rollout_id="r1")
    res = await env.step(Shell(command="cat clamp.py"))
    verdict = await env.verify()
    await env.close()

The same API as envs.api.Environment (async reset/step/verify/close, sync state() and tools()),
over one OpenEnv WebSocket session (openenv's GenericEnvClient). Environment keyword arguments
(max_steps, step_timeout, verify_timeout, reset_mode, auto_verify, fresh_grading) travel with
each reset and mean what they mean locally. What differs:
- state() answers from the last reply (elapsed_s is advanced locally); `await astate()` asks.
- A refused handshake or reset raises RemoteRefused (an EpisodeError) with the HTTP-style
  status: 401 (token), 429 (this client's session cap), 503 (pool full after the server's wait).
- A connection lost mid-episode is what a dead sandbox is locally: the step ends the episode
  with ENV_COLLAPSE and verify() gives reward None (the server has dropped the episode).
The token comes from `token=` or ENVFACTORY_SERVE_TOKEN.
"""

from __future__ import annotations

import re
import time
from typing import Any

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from envs.actions import Observation, tool_call_id, tools
from envs.api import EnvState, EpisodeError, StepResult, task_id_of
from envs.config import get_settings
from envs.models import FailureKind, SWETask
from envs.verify import VerifyResult, failed

ENV_OPTIONS = ("max_steps", "step_timeout", "verify_timeout", "reset_mode", "auto_verify",
               "fresh_grading")
_ERROR = re.compile(r"envfactory:(\d{3}):([A-Z_]+): (.*?)(?: \(code: [A-Z_]+\))?$", re.S)
_HTTP = re.compile(r"HTTP (\d{3})")


def error_text(status: int, failure: FailureKind, message: str) -> str:
    """How the server words an error so that this client can raise the right exception."""
    return f"envfactory:{status}:{failure.value}: {message}"


class RemoteRefused(EpisodeError):
    """The server said no: 401 (token), 429 (per-client cap), 503 (pool full). Retry 429 and
    503 later; 401 needs the right token."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}", FailureKind.NONE)
        self.status = status


def remote_error(exc: BaseException) -> BaseException:
    """The exception a server error (an OpenEnv error frame or a refused handshake) stands
    for: RemoteRefused, LookupError, ValueError or EpisodeError; else `exc` itself."""
    text = str(exc)
    m = _ERROR.search(text)
    if m:
        status, failure, message = int(m[1]), FailureKind(m[2]), m[3]
        if status in (401, 429, 503):
            return RemoteRefused(status, message)
        if status == 404:
            return LookupError(message)
        if status == 400:
            return ValueError(message)
        return EpisodeError(message, failure)
    if "CAPACITY_REACHED" in text:  # OpenEnv's own cap on sessions
        return RemoteRefused(503, text)
    h = _HTTP.search(text)
    if isinstance(exc, ConnectionError) and h and int(h[1]) in (401, 403, 429, 503):
        return RemoteRefused(int(h[1]), text)
    return exc


def _wire(action: Any) -> dict[str, Any]:
    """An action as the server's EpisodeAction carries it: under `action`, as JSON."""
    if isinstance(action, BaseModel):
        return {"action": action.model_dump(mode="json", exclude_none=True)}
    try:
        return {"action": to_jsonable_python(action)}
    except Exception:  # not JSON at all: the server answers "[not an action: ...]" for a list
        return {"action": [type(action).__name__]}


def _info(raw: dict[str, Any]) -> dict[str, Any]:
    info = dict(raw)
    if "failure_kind" in info:
        info["failure_kind"] = FailureKind(info["failure_kind"])
    if isinstance(info.get("verdict"), dict):
        info["verdict"] = VerifyResult.model_validate(info["verdict"])
    return info


class RemoteEnvironment:
    """One task on a remote server; one episode at a time (like envs.api.Environment)."""

    def __init__(self, task: Any, url: str, *, token: str | None = None,
                 client_id: str | None = None, connect_timeout: float = 30.0,
                 message_timeout: float = 3600.0, **kwargs: Any) -> None:
        bad = set(kwargs) - set(ENV_OPTIONS)
        if bad:
            raise TypeError(f"a remote environment takes {', '.join(ENV_OPTIONS)}; not "
                            f"{', '.join(sorted(bad))} (the pool and registry are the server's)")
        self.task_id = task if isinstance(task, str) else task_id_of(task)
        self.kind: str | None = None if isinstance(task, str) else (
            "swe" if isinstance(task, SWETask) else "terminal")
        self.url = url.rstrip("/")
        self.options = {k: (v.value if hasattr(v, "value") else v) for k, v in kwargs.items()}
        self.auto_verify = bool(kwargs.get("auto_verify", False))
        token = token if token is not None else (get_settings().serve_token or "")
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        if client_id:
            self._headers["X-Client-Id"] = client_id
        self._timeouts = (connect_timeout, message_timeout)
        self._client: Any = None
        self._state: dict[str, Any] = {}
        self._state_at = 0.0
        self._lost: str | None = None  # the connection dropped: the episode is gone
        self._closed = False

    async def __aenter__(self) -> RemoteEnvironment:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ transport

    async def _connect(self) -> Any:
        if self._client is None:
            from openenv.core.generic_client import GenericEnvClient

            client = GenericEnvClient(base_url=self.url, connect_timeout_s=self._timeouts[0],
                                      message_timeout_s=self._timeouts[1],
                                      headers=self._headers or None)
            try:
                await client.connect()
            except Exception as exc:
                raise remote_error(exc) from exc
            self._client = client
        return self._client

    async def _send(self, op: str, payload: dict[str, Any]) -> Any:
        """One request; a server error becomes its exception; a lost connection is
        ConnectionError (the session, and so the episode, is gone)."""
        client = await self._connect()
        try:
            if op == "reset":
                return await client.reset(**payload)
            return await client.step(payload)
        except RuntimeError as exc:
            err = remote_error(exc)
            raise err from exc
        except (OSError, TimeoutError) as exc:
            await self._drop()
            raise ConnectionError(f"{type(exc).__name__}: {exc}") from exc
        except Exception as exc:  # websockets' ConnectionClosed and kin
            if type(exc).__module__.startswith("websockets"):
                await self._drop()
                raise ConnectionError(f"{type(exc).__name__}: {exc}") from exc
            raise

    async def _drop(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                await client.close()
            except Exception:
                pass  # best effort: the server drops the session when the socket goes

    def _keep_state(self, obs: dict[str, Any]) -> None:
        if obs.get("state"):
            self._state, self._state_at = obs["state"], time.monotonic()
            self.kind = self._state.get("kind") or self.kind

    # ------------------------------------------------------------------ episode API

    async def reset(self, *, seed: int | None = None, rollout_id: str | None = None,
                    options: dict[str, Any] | None = None) -> tuple[Observation, dict[str, Any]]:
        """Start an episode on the server. Raises EpisodeError (RemoteRefused when refused)."""
        if self._closed:
            raise EpisodeError("the environment is closed")
        self._lost = None
        try:
            r = await self._send("reset", {"task_id": self.task_id, "seed": seed,
                                           "episode_id": rollout_id, "options": self.options})
        except ConnectionError as exc:
            raise EpisodeError(f"lost the server: {exc}", FailureKind.ENV_COLLAPSE) from exc
        obs = r.observation
        self._keep_state(obs)
        return Observation(text=obs["text"], messages=obs["messages"]), obs.get("info", {})

    async def step(self, action: Any) -> Any:
        """Act once; the agent's mistakes are observations, as locally."""
        if self._lost is not None:
            raise EpisodeError("the episode is over (the connection was lost); call reset()")
        try:
            r = await self._send("step", _wire(action))
        except ConnectionError as exc:
            self._lost = str(exc)
            call_id = tool_call_id(action)
            info = {"failure_kind": FailureKind.ENV_COLLAPSE}
            if call_id is not None:
                info["tool_call_id"] = call_id
            return StepResult(observation=Observation.result(f"[lost the server: {exc}]",
                                                             call_id),
                              terminated=True, info=info)
        obs = r.observation
        self._keep_state(obs)
        return StepResult(observation=Observation(text=obs["text"], messages=obs["messages"]),
                          terminated=obs["terminated"], truncated=obs["truncated"],
                          reward=r.reward or 0.0, info=_info(obs.get("info", {})))

    async def verify(self, *, timeout: float | None = None) -> Any:
        """Run the hidden tests on the server and grade them; ends the episode."""
        if self._lost is not None:
            return failed(FailureKind.ENV_COLLAPSE, f"lost the server: {self._lost}")
        if self._client is None:
            return failed(FailureKind.ENV_COLLAPSE, "no live episode: reset() did not succeed")
        payload: dict[str, Any] = {"control": "verify"}
        if timeout:
            payload["verify_timeout"] = timeout
        try:
            r = await self._send("step", payload)
        except ConnectionError as exc:
            self._lost = str(exc)
            return failed(FailureKind.ENV_COLLAPSE, f"lost the server: {exc}")
        except Exception as exc:
            if isinstance(exc, EpisodeError) and not isinstance(exc, RemoteRefused):
                return failed(FailureKind.ENV_COLLAPSE, str(exc))
            raise
        self._keep_state(r.observation)
        return VerifyResult.model_validate(r.observation["verdict"])

    def state(self) -> Any:
        """The EnvState of the last reply (elapsed_s advanced to now)."""
        if not self._state:
            return EnvState.model_construct(
                task_id=self.task_id, kind=self.kind, rollout_id=None, seed=None, step_count=0,
                elapsed_s=0.0, terminated=False, truncated=False, failure=FailureKind.NONE,
                sandbox_id=None)
        s = dict(self._state)
        if s.get("elapsed_s"):
            s["elapsed_s"] += time.monotonic() - self._state_at
        if self._lost is not None:
            s.update(terminated=True, failure=FailureKind.ENV_COLLAPSE.value)
        return EnvState.model_validate(s)

    async def astate(self) -> dict[str, Any]:
        """The server's OpenEnv state of this session, asked now."""
        client = await self._connect()
        return await client.state()

    def tools(self) -> list[dict[str, Any]]:
        """The actions as OpenAI-style function tools (the server's MCP tools are the same)."""
        return tools()

    async def close(self) -> None:
        """End the session; the server gives the sandbox back. Idempotent."""
        if self._closed:
            return
        self._closed = True
        await self._drop()
