"""The agent loop: the policy server drives an episode through tool calls, recorded as TITO.

Each turn asks the server (or the router in front of N of them) for a chat completion with
the episode's tools, sending the rollout id (for prefix-affine routing) and the previous
turn's ids as `prefix_ids` (so nothing generated is re-tokenized). The first tool call of an
answer is stepped in the environment; the episode ends at `submit`, at an answer without a
tool call, or after `max_turns`, and is then verified. An infrastructure failure gives
reward None (the trainer leaves the sample out), never 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import zlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

from policy.tito import Trajectory, Turn

POLICY_SERVER = "POLICY_SERVER"  # the failure kind of a trajectory the servers failed


class PolicyServerError(RuntimeError):
    """The policy servers did not answer: the sample is infrastructure's, reward None."""


def http_client() -> Any:
    """The client rollouts talk to the servers with: long reads, short-lived keep-alive."""
    import httpx

    return httpx.AsyncClient(timeout=httpx.Timeout(3600.0, connect=10.0),
                             limits=httpx.Limits(keepalive_expiry=30.0))


async def _complete(client: Any, base_url: str, body: dict[str, Any]) -> dict[str, Any]:
    import httpx

    try:
        resp = await client.post(base_url.rstrip("/") + "/v1/chat/completions", json=body)
    except httpx.HTTPError as e:
        raise PolicyServerError(f"policy server: {type(e).__name__}: {e}") from None
    if resp.status_code != 200:
        raise PolicyServerError(f"policy server: HTTP {resp.status_code}: {resp.text[:300]}")
    return resp.json()


def _seed(tag: str) -> int:
    """A sampling seed from a rollout's identity (step, task, sample): no two rollouts of a
    run share a random stream, and a rerun repeats them."""
    return zlib.crc32(tag.encode()) & 0x7FFFFFFF


def _failure_kind(exc: BaseException) -> str:
    """The infrastructure kind a failed episode is recorded with (its reward is None)."""
    from envs.api import EpisodeError
    from envs.models import FailureKind

    if isinstance(exc, PolicyServerError):
        return POLICY_SERVER
    if isinstance(exc, EpisodeError) and exc.failure != FailureKind.NONE:
        return exc.failure.value
    return FailureKind.ENV_COLLAPSE.value


async def _release(env: Any, client: Any, own: bool) -> None:
    if env is not None:
        await env.close()
    if own:
        await client.aclose()


def _task_id(task: Any) -> str:
    return str(getattr(task, "task_id", None) or getattr(task, "instance_id", None) or task)


async def rollout(task: Any, *, base_url: str, rollout_id: str, group: str, pool: Any = None,
                  client: Any = None, max_turns: int = 3, max_tokens: int = 256,
                  temperature: float = 1.0, seed: int = 0, step_timeout: float = 60.0
                  ) -> Trajectory:
    """One episode of `task` driven by the policy at `base_url`. Never raises for a failure
    of the servers or the environment: the trajectory then has reward None and its kind."""
    import envs

    own = client is None
    client = client or http_client()
    env = None
    turns: list[Turn] = []
    messages: list[dict[str, Any]] = []

    def failed(kind: str) -> Trajectory:
        return Trajectory(task_id=_task_id(task), rollout_id=rollout_id, group=group,
                          turns=tuple(turns), reward=None, failure=kind,
                          messages=tuple(messages))

    try:
        env = envs.make(task, pool=pool, max_steps=max_turns + 1, step_timeout=step_timeout)
        obs, _ = await env.reset(seed=seed, rollout_id=rollout_id)
        messages = [dict(m) for m in obs.messages]
        tools = env.tools()
        prefix: list[int] | None = None
        for t in range(max_turns):
            body: dict[str, Any] = {"messages": messages, "tools": tools,
                                    "max_tokens": max_tokens, "temperature": temperature,
                                    "seed": seed * 1000 + t, "rollout_id": rollout_id}
            if prefix is not None:
                body["prefix_ids"] = prefix
            choice = (await _complete(client, base_url, body))["choices"][0]
            tito = choice["tito"]
            turns.append(Turn(prompt_ids=tuple(tito["prompt_ids"]),
                              output_ids=tuple(tito["output_ids"]),
                              logprobs=tuple(tito["logprobs"]), version=tito["version"]))
            prefix = list(tito["prompt_ids"]) + list(tito["output_ids"])
            msg = {k: v for k, v in choice["message"].items() if v is not None}
            calls = msg.get("tool_calls") or []
            if calls:
                msg["tool_calls"] = calls[:1]  # one action per turn
            messages.append(msg)
            if not calls:
                break
            step = await env.step(calls[0])
            messages += [dict(m) for m in step.observation.messages]
            if calls[0]["function"]["name"] == "submit" or step.terminated or step.truncated:
                break
        verdict = await env.verify()
        return Trajectory(task_id=_task_id(task), rollout_id=rollout_id, group=group,
                          turns=tuple(turns), reward=verdict.reward,
                          failure=verdict.failure.value, messages=tuple(messages))
    except Exception as e:  # one broken sample must not take its batch down
        return failed(_failure_kind(e))
    finally:
        await _release(env, client, own)


async def reference_rollout(task: Any, *, base_url: str, rollout_id: str, group: str,
                            pool: Any = None, client: Any = None, seed: int = 0,
                            temperature: float = 1.0) -> Trajectory:
    """The oracle as a trajectory: its one tool call (`policy.train.reference_target`) is
    stepped in a real episode and verified, and the server tokenizes and scores it (at the
    sampling temperature), so it carries behaviour log-probs and a weight version like a
    sampled rollout. The trainer never tokenizes anything itself."""
    import envs
    from envs.actions import tools as action_tools
    from policy.chat import parse_tool_calls
    from policy.train import reference_target

    own = client is None
    client = client or http_client()
    env = None
    base = base_url.rstrip("/")

    def failed(kind: str) -> Trajectory:
        return Trajectory(task_id=_task_id(task), rollout_id=rollout_id, group=group,
                          reward=None, failure=kind, reference=True)

    async def post(path: str, body: dict[str, Any]) -> Any:
        resp = await client.post(base + path, json=body | {"rollout_id": rollout_id})
        if resp.status_code != 200:
            raise PolicyServerError(f"policy server: HTTP {resp.status_code}: {resp.text[:300]}")
        return resp.json()

    try:
        env = envs.make(task, pool=pool, max_steps=2)
        obs, _ = await env.reset(seed=seed, rollout_id=rollout_id)
        messages = [dict(m) for m in obs.messages]
        target = reference_target(task)
        prompt = (await post("/tokenize", {"messages": messages, "tools": action_tools()}))["ids"]
        out_ids = (await post("/tokenize", {"text": target}))["ids"]
        tito = (await post("/v1/completions", {"prompt": prompt + out_ids, "max_tokens": 0,
                                               "echo": True, "temperature": temperature})
                )["choices"][0]["tito"]
        turn = Turn(prompt_ids=tuple(prompt), output_ids=tuple(out_ids),
                    logprobs=tuple(tito["prompt_logprobs"][len(prompt):]),
                    version=tito["version"])
        _, calls = parse_tool_calls(target)
        step = await env.step(calls[0])
        verdict = await env.verify()
        return Trajectory(task_id=_task_id(task), rollout_id=rollout_id, group=group,
                          turns=(turn,), reward=verdict.reward, failure=verdict.failure.value,
                          reference=True,
                          messages=tuple(messages + [dict(m) for m in step.observation.messages]))
    except Exception as e:  # one broken sample must not take its batch down
        return failed(_failure_kind(e))
    finally:
        await _release(env, client, own)


async def group_rollouts(task: Any, *, client: Any, sem: asyncio.Semaphore, base_url: str,
                         group_size: int, group: str, pool: Any = None, references: int = 0,
                         temperature: float = 1.0, **kw: Any) -> list[Trajectory]:
    """One task's group: `group_size` sampled rollouts and `references` oracle trajectories,
    each holding one of `sem`'s slots while it runs (the slots are shared across groups)."""
    async def one(gi: int) -> Trajectory:
        rid = f"{group}-{gi}"
        async with sem:
            if gi >= group_size:
                return await reference_rollout(task, base_url=base_url, pool=pool,
                                               client=client, rollout_id=rid, group=group,
                                               temperature=temperature)
            return await rollout(task, base_url=base_url, pool=pool, client=client,
                                 rollout_id=rid, group=group, seed=_seed(rid),
                                 temperature=temperature, **kw)
    return list(await asyncio.gather(*(one(gi) for gi in range(group_size + references))))


async def rollout_groups(tasks: Sequence[Any], *, base_url: str, group_size: int,
                         pool: Any = None, concurrency: int = 8, tag: str = "r",
                         references: int = 0, temperature: float = 1.0,
                         **kw: Any) -> list[list[Trajectory]]:
    """`group_size` rollouts of every task, at most `concurrency` at once; one list per task.
    With `references`, each group also gets that many oracle trajectories
    (`reference_rollout`): a group whose samples all fail then still has a signal."""
    sem = asyncio.Semaphore(concurrency)
    async with http_client() as client, pool_scope(pool):
        return list(await asyncio.gather(*(
            group_rollouts(t, client=client, sem=sem, base_url=base_url,
                           group_size=group_size, group=f"{tag}-{ti}", pool=pool,
                           references=references, temperature=temperature, **kw)
            for ti, t in enumerate(tasks))))


@contextlib.asynccontextmanager
async def pool_scope(pool: Any) -> AsyncIterator[None]:
    """Without a pool of the caller's, episodes use the event loop's default one: close it
    (its warm spares too) on the way out, or each `asyncio.run` of a training loop would
    leave its spares running until the process exits."""
    try:
        yield
    finally:
        if pool is None:
            from envs.episode import shutdown

            await shutdown()
