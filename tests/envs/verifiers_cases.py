"""The verifiers environment (envs/verifiers_env.py) driven by verifiers itself, on a real engine:
an OpenAI-compatible endpoint that replays the task's reference solution as tool calls gets
reward 1 through verifiers' scoring; the project's policy server (`tiny`) completes rollouts
with numeric rewards; a task with no image is a failed rollout, not a 0.

verifiers cannot share the main venv (tests/envs/verifiers_venv.py says why), so the main run
does not collect this file: tests/envs/test_verifiers_env.py runs it in the side venv.

    .venv-verifiers/bin/python -m pytest tests/envs/verifiers_cases.py
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import verifiers.v1 as vf

import envfactory
from envs import verifiers_env
from envs.models import TerminalTask
from envs.registry import Registry
from tests.envs.test_api import terminal_task

pytestmark = pytest.mark.docker

GHOST = TerminalTask(task_id="ghost", instruction="x", dockerfile="FROM scratch\n",
                     solution="true", image="envfactory/no-such-image:0")


@pytest.fixture()
def adder(tmp_home, base_image) -> TerminalTask:
    task = terminal_task(base_image)
    with Registry() as reg:
        reg.put_terminal_task(task)
        reg.put_terminal_task(GHOST)
    return task


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def oracle(adder) -> Iterator[str]:
    """A deterministic OpenAI-compatible server: turn 1 runs the task's reference solution,
    turn 2 submits, any later turn answers in text. Replies as OpenAI's API does."""
    import uvicorn
    from fastapi import FastAPI

    app = FastAPI()
    script = [("shell", {"command": adder.solution}), ("submit", {})]

    @app.post("/v1/chat/completions")
    async def chat(body: dict[str, Any]) -> dict[str, Any]:
        turn = sum(1 for m in body["messages"] if m.get("role") == "assistant")
        msg: dict[str, Any] = {"role": "assistant", "content": "done"}
        if turn < len(script) and body.get("tools"):
            name, args = script[turn]
            msg = {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{turn}", "type": "function",
                 "function": {"name": name, "arguments": json.dumps(args)}}]}
        return {"id": f"chatcmpl-{uuid.uuid4().hex[:8]}", "object": "chat.completion",
                "created": int(time.time()), "model": body.get("model", "oracle"),
                "choices": [{"index": 0, "message": msg,
                             "finish_reason": "tool_calls" if "tool_calls" in msg else "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "the oracle server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/v1"
    server.should_exit = True
    thread.join(10)


def _load(tasks: list[str]) -> vf.Env:
    """What `vf-eval envfactory --env.taskset.tasks ...` builds."""
    config = vf.resolve_env_config({"taskset": {"id": "envfactory", "tasks": tasks,
                                                "task": {"max_steps": 6}},
                                    "pool_max_live": 4})
    return vf.load_environment(config)


def _eval(env: vf.Env, base_url: str, model: str, rollouts: int,
          **sampling: Any) -> list[vf.Episode]:
    """Every task x `rollouts` episodes, the way vf-eval runs them in-process."""
    ctx = vf.ModelContext(model=model, client=vf.EvalClientConfig(
        base_url=base_url, api_key_var="ENVFACTORY_TEST_NO_KEY"),
        sampling=vf.SamplingConfig(**sampling))

    async def main() -> list[vf.Episode]:
        async with env.serving():
            slots = [slot for task in env.taskset for slot in env.slots(task, rollouts)]
            return list(await asyncio.gather(*(env.run_slot(s, ctx) for s in slots)))

    return asyncio.run(main())


def test_the_oracle_replayed_as_tool_calls_scores_one(oracle):
    env = _load(["add-numbers"])
    assert isinstance(env, verifiers_env.EnvfactoryEnv)
    assert isinstance(env.taskset, verifiers_env.EnvfactoryTaskset)
    (episode,) = _eval(env, oracle, "oracle", 1)
    (trace,) = episode.traces
    assert episode.ok and trace.ok, trace.errors
    assert trace.rewards["solved"] is not None and trace.rewards["solved"].score == 1.0
    assert trace.reward == 1.0 and trace.state.resolved and trace.state.steps == 2
    assert trace.num_turns == 2  # shell, then submit: both model calls went through verifiers
    assert verifiers_env.live_episodes() == []


def test_the_policy_server_completes_rollouts_with_numeric_rewards(adder, tmp_path):
    pytest.importorskip("torch", reason="the .[policy] extra is not installed")
    from policy.cluster import Cluster

    env = _load(["add-numbers"])
    with Cluster(model="tiny", ranks=1, log_dir=tmp_path / "srv") as cluster:
        episodes = _eval(env, cluster.url + "/v1", "tiny", 2, max_tokens=16, temperature=1.0)
    assert len(episodes) == 2
    for episode in episodes:
        (trace,) = episode.traces
        assert trace.ok and trace.is_completed, trace.errors
        assert trace.num_turns >= 1
        assert isinstance(trace.reward, float) and 0.0 <= trace.reward <= 1.0
        assert trace.rewards["solved"] is not None
    assert verifiers_env.live_episodes() == []


def test_an_infrastructure_failure_is_a_failed_rollout_not_a_zero(oracle):
    (episode,) = _eval(_load(["ghost"]), oracle, "oracle", 1)
    (trace,) = episode.traces
    assert not episode.ok and not trace.ok
    assert trace.errors[-1].type == "SandboxError" and "ghost" in trace.errors[-1].message
    assert trace.rewards.get("solved") is None  # never scored, so never averaged in as 0
    assert trace.num_turns == 0
    assert verifiers_env.live_episodes() == []


def test_verifiers_finds_the_plugin_in_the_envfactory_package():
    # `--env.taskset.id envfactory` imports the package and takes these three names.
    for name in verifiers_env.__all__:
        assert getattr(envfactory, name) is getattr(verifiers_env, name)


def test_load_environment_builds_the_same_env(adder):
    env = verifiers_env.load_environment(["add-numbers"], max_steps=3, pool_max_live=2)
    assert isinstance(env, verifiers_env.EnvfactoryEnv) and env.config.pool_max_live == 2
    (task,) = list(env.taskset)
    assert task.data.id == "add-numbers" and task.data.kind == "terminal"
    assert task.config.max_steps == 3 and "answer.txt" in task.data.prompt_text
