"""`envfactory serve` in a real separate process: OpenEnv's own clients (GenericEnvClient,
MCPToolClient) run episodes unchanged; envs.make(remote=...) gives the rewards local episodes
give (the oracle 1, doing nothing 0); the token, the per-client cap and the pool's
back-pressure refuse what they should."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import envs
from envs.actions import Shell, Submit, tools
from envs.api import Environment
from envs.models import TerminalTask
from envs.pool import Pool

pytestmark = pytest.mark.docker

if os.environ.get("CI"):  # the OpenEnv client must run in CI: a missing package fails
    import openenv  # noqa: F401
else:
    pytest.importorskip("openenv", reason="openenv is not installed")

from openenv.core.env_server.mcp_types import CallToolAction  # noqa: E402
from openenv.core.generic_client import GenericEnvClient  # noqa: E402
from openenv.core.mcp_client import MCPToolClient  # noqa: E402

from envs.remote import RemoteRefused  # noqa: E402

TOKEN = "test-token-7f3a"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
MAX_LIVE, PER_CLIENT, QUEUE_S = 4, 3, 2.0
TESTS = {"test.sh": 'if [ "$(cat /app/answer.txt 2>/dev/null)" = 7 ]; '
                    "then echo 1 > /logs/verifier/reward.txt; "
                    "else echo 0 > /logs/verifier/reward.txt; fi\n"}
ROOT = Path(__file__).resolve().parents[2]


def adder(base: str) -> TerminalTask:
    return TerminalTask(
        task_id="serve-add", instruction="Write the sum of the two numbers in /app/input.txt "
                                         "to /app/answer.txt.",
        dockerfile=f"FROM {base}\nWORKDIR /app\nCOPY app/ /app/\n",
        files={"app/input.txt": "3 4\n"},
        solution="read a b < /app/input.txt\necho $((a + b)) > /app/answer.txt\n",
        tests=TESTS, family="add", difficulty="easy", verifier_timeout_sec=30)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, headers: dict[str, str] | None = None) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}),
                                    timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:  # not listening yet
        return 0


@pytest.fixture(scope="module")
def task(base_image) -> TerminalTask:
    return adder(base_image)


@pytest.fixture(scope="module")
def server(task, tmp_path_factory):
    """`python -m harness.serve_cli` with the task in its own registry; its URL."""
    from envs.registry import Registry

    home = tmp_path_factory.mktemp("serve-home")
    db = f"sqlite:///{home / 'registry.sqlite'}"
    with Registry(db) as reg:
        reg.put_terminal_task(task)
    port = _free_port()
    env = {**os.environ, "ENVFACTORY_DB_URL": db, "ENVFACTORY_SERVE_TOKEN": TOKEN,
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    log = open(home / "server.log", "w")  # noqa: SIM115 (open for the process's life)
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.serve_cli", "--port", str(port),
         "--max-live", str(MAX_LIVE), "--per-client", str(PER_CLIENT),
         "--queue-timeout", str(QUEUE_S)], cwd=ROOT, env=env, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90  # imports (openenv brings gradio) take seconds
    while _get(f"{url}/health") != 200:
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the server did not start: {(home / 'server.log').read_text()[-2000:]}")
        time.sleep(0.3)
    yield url
    proc.send_signal(signal.SIGTERM)  # a graceful stop closes the pool and its sandboxes
    try:
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        log.close()


def test_openenv_clients_run_episodes_unchanged(server, task):
    async def main():
        async with GenericEnvClient(base_url=server, headers=AUTH) as c:
            r = await c.reset(task_id=task.task_id, seed=0)
            assert "sum of the two numbers" in r.observation["text"] and not r.done
            r = await c.step({"type": "shell", "command": "cat /app/input.txt"})
            assert r.observation["text"].startswith("3 4") and not r.done
            await c.step({"type": "shell", "command": task.solution})
            r = await c.step({"type": "submit"})
            assert r.done and r.reward == 1.0  # a bare reset verifies on submit
            state = await c.state()
            assert state["task_id"] == task.task_id and state["step_count"] == 3
            r = await c.reset(task_id=task.task_id)  # the same session, a clean episode
            r = await c.step({"type": "submit"})
            assert r.done and r.reward == 0.0

        async with MCPToolClient(base_url=server, headers=AUTH) as m:
            await m.reset(task_id=task.task_id)
            names = [t.name for t in await m.list_tools()]
            assert names == [t["function"]["name"] for t in tools()]
            assert (await m.call_tool("shell", command="cat /app/input.txt")).startswith("3 4")
            await m.call_tool("write_file", path="/app/answer.txt", content="7\n")
            r = await m.step(CallToolAction(tool_name="submit", arguments={}))
            assert r.done and r.reward == 1.0

    asyncio.run(main())
    assert _get(f"{server}/schema", AUTH) == 200


def test_a_missing_or_wrong_token_is_refused(server, task):
    assert _get(f"{server}/health") == 200  # open to probes
    assert _get(f"{server}/schema") == 401
    assert _get(f"{server}/schema", {"Authorization": "Bearer nope"}) == 401

    async def main():
        with pytest.raises(ConnectionError, match="401"):
            async with GenericEnvClient(base_url=server) as c:
                await c.reset(task_id=task.task_id)
        env = envs.make(task.task_id, remote=server, token="nope")
        with pytest.raises(RemoteRefused) as info:
            await env.reset()
        assert info.value.status == 401
        await env.close()

    asyncio.run(main())


async def _episode(env, task: TerminalTask, solve: bool) -> tuple[list[str], float | None, int]:
    try:
        await env.reset(seed=0, rollout_id="same")
        texts = [(await env.step(Shell(command="cat /app/input.txt"))).observation.text]
        if solve:
            texts.append((await env.step(Shell(command=task.solution))).observation.text)
        res = await env.step(Submit())
        assert res.terminated and res.reward == 0.0  # no auto_verify: verify() grades
        verdict = await env.verify()
        return texts, verdict.reward, env.state().step_count
    finally:
        await env.close()


def test_remote_rewards_equal_local(server, task):
    async def main():
        async with Pool(max_live=2, spares=0) as pool:
            local = [await _episode(Environment(task, pool=pool), task, s) for s in (True, False)]
        remote = await asyncio.gather(*[
            _episode(envs.make(task.task_id, remote=server, token=TOKEN), task, s)
            for s in (True, False)])
        return local, remote

    local, remote = asyncio.run(main())
    assert [r[1] for r in local] == [1.0, 0.0]
    assert remote == local  # same observations, rewards and step counts


def test_per_client_cap_and_back_pressure(server, task):
    async def main():
        def make(client: str):
            return envs.make(task.task_id, remote=server, token=TOKEN, client_id=client)

        a = [make("a") for _ in range(PER_CLIENT)]
        b = [make("b"), make("b")]
        try:
            for env in a:
                await env.reset()
            extra = make("a")
            with pytest.raises(RemoteRefused) as info:  # a's fourth session
                await extra.reset()
            assert info.value.status == 429
            await extra.close()
            await b[0].reset()  # another client still gets in: 4 live, the pool's cap
            t0 = time.monotonic()
            with pytest.raises(RemoteRefused) as info:  # waited, then refused
                await b[1].reset()
            assert info.value.status == 503 and time.monotonic() - t0 >= QUEUE_S * 0.9
            waiting = asyncio.create_task(b[1].reset())  # it waits for a slot...
            await asyncio.sleep(0.5)
            assert not waiting.done()
            await a[0].close()  # ...and gets the one freed
            _obs, info_ = await asyncio.wait_for(waiting, 30)
            assert info_["task_id"] == task.task_id
        finally:
            for env in a + b:
                await env.close()

    asyncio.run(main())
