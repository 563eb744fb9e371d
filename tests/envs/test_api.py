"""The episode API on a real engine: actions, rewards for SWE and terminal tasks, 32
concurrent episodes under a cap, a container killed mid-episode, verify timeouts, reset
determinism, check_env on sample tasks and on planted broken ones, the sync wrapper."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

import envs
from data import eval_samples
from envs.api import (
    ApplyPatch,
    Environment,
    EpisodeError,
    ReadFile,
    Shell,
    Submit,
    SyncEnvironment,
    WriteFile,
    make,
)
from envs.check import acheck_env
from envs.models import FailureKind, SWETask, TerminalTask
from envs.pool import Pool

pytestmark = pytest.mark.docker

ADD_TESTS = {"test.sh": 'if [ "$(cat /app/answer.txt 2>/dev/null)" = 7 ]; '
                        "then echo 1 > /logs/verifier/reward.txt; "
                        "else echo 0 > /logs/verifier/reward.txt; fi\n"}


def terminal_task(base: str, task_id: str = "add-numbers", **kw) -> TerminalTask:
    """A small terminal task: add two numbers from a file."""
    fields = dict(
        task_id=task_id, instruction="Write the sum of the two numbers in /app/input.txt "
                                     "to /app/answer.txt.",
        dockerfile=f"FROM {base}\nWORKDIR /app\nCOPY app/ /app/\n",
        files={"app/input.txt": "3 4\n"},
        solution="read a b < /app/input.txt\necho $((a + b)) > /app/answer.txt\n",
        tests=ADD_TESTS, family="add", difficulty="easy", tags=["arith"],
        verifier_timeout_sec=30)
    fields.update(kw)
    return TerminalTask(**fields)


@pytest.fixture(scope="module")
def built(docker_engine):
    return eval_samples.build_tasks()


@pytest.fixture(scope="module")
def pyclamp(built) -> SWETask:
    return built[0].task


@pytest.fixture(scope="module")
def adder(base_image) -> TerminalTask:
    return terminal_task(base_image)


def _run(coro):
    return asyncio.run(coro)


def test_facade_exports():
    assert envs.make is make and envs.Pool is Pool
    assert callable(envs.check_env) and callable(envs.find_tasks)


def test_make_and_load_environment_resolve_registry_ids(tmp_home, pyclamp, adder):
    from envs.registry import Registry

    with Registry() as reg:
        reg.put_swe_task(pyclamp)
        reg.put_terminal_task(adder)
    assert make(pyclamp.instance_id).kind == "swe"
    env = envs.load_environment("add-numbers", max_steps=3)
    assert env.kind == "terminal" and env.max_steps == 3 and env.task == adder
    with pytest.raises(KeyError):
        make("no-such-task")


def test_swe_episode_actions_and_rewards(pyclamp):
    async def main():
        async with Pool(max_live=3, spares=1) as pool:
            env = make(pyclamp, pool=pool)
            obs, info = await env.reset(seed=1, rollout_id="r-1")
            assert "clamp" in obs.text and obs.messages[-1] == {"role": "user",
                                                               "content": obs.text}
            assert info["rollout_id"] == "r-1" and info["seed"] == 1
            r = await env.step(ReadFile(path="clamp.py"))
            assert "return lo" in r.observation.text and not r.terminated
            r = await env.step(ReadFile(path="nope.py"))
            assert r.info["failure_kind"] is FailureKind.MODEL
            r = await env.step(Shell(command="exit 3"))
            assert r.info["exit_code"] == 3 and r.info["failure_kind"] is FailureKind.MODEL
            r = await env.step(WriteFile(path="clamp.py/x", content="under a file"))
            assert r.info["failure_kind"] is FailureKind.MODEL and not r.terminated
            r = await env.step(ApplyPatch(patch="not a patch"))
            assert r.info["failure_kind"] is FailureKind.PATCH_FAILED
            r = await env.step(ApplyPatch(patch=pyclamp.patch))
            assert r.info["failure_kind"] is FailureKind.NONE
            r = await env.step(Submit())
            assert r.terminated
            assert env.state().step_count == 7
            with pytest.raises(EpisodeError):
                await env.step(Shell(command="true"))
            solved = await env.verify()
            # An edit of the hidden test file does not help: it is put back before grading.
            await env.reset()
            await env.step(WriteFile(path="tests/test_clamp.py", content="def test_x(): pass\n"))
            gamed = await env.verify()
            await env.close()
            await env.close()  # idempotent
            return solved, gamed

    solved, gamed = _run(main())
    assert solved.reward == 1.0 and solved.resolved and solved.failure is FailureKind.NONE
    assert {t.test_id for t in solved.tests} >= set(eval_samples.get("pyclamp").fail_to_pass)
    assert gamed.reward == 0.0 and not gamed.is_infrastructure


def test_reset_is_deterministic_and_clean(adder):
    async def main():
        async with Pool(max_live=2, spares=1) as pool:
            env = make(adder, pool=pool)
            obs1, _ = await env.reset(seed=0)
            fp1 = await env.fingerprint()
            await env.step(WriteFile(path="/app/answer.txt", content="7\n"))
            await env.step(Shell(command="echo junk > /app/input.txt"))
            obs2, _ = await env.reset(seed=0)
            fp2 = await env.fingerprint()
            left = await env.step(Shell(command="ls /app; cat /app/input.txt"))
            await env.close()
            return obs1, obs2, fp1, fp2, left.observation.text

    obs1, obs2, fp1, fp2, left = _run(main())
    assert obs1 == obs2 and fp1 == fp2
    assert "answer.txt" not in left and "3 4" in left


def test_32_concurrent_episodes_under_the_cap(pyclamp, adder, docker_engine):
    """Half the episodes solve their task (reward 1), half do nothing (reward 0)."""
    cap = 8

    async def episode(pool: Pool, task, solve: bool, i: int) -> tuple[bool, float | None]:
        env = Environment(task, pool=pool)
        try:
            await env.reset(seed=i, rollout_id=f"ep-{i}")
            await env.step(Shell(command="ls"))
            if solve:
                if isinstance(task, SWETask):
                    await env.step(ApplyPatch(patch=task.patch))
                else:
                    await env.step(Shell(command=task.solution))
            await env.step(Submit())
            return solve, await env.verify()
        finally:
            await env.close()

    async def main():
        async with Pool(max_live=cap, spares=2) as pool:
            t0 = time.monotonic()
            jobs = [episode(pool, pyclamp if i % 2 else adder, (i // 2) % 2 == 0, i)
                    for i in range(32)]
            results = await asyncio.gather(*jobs)
            took = time.monotonic() - t0
        return results, took, pool.metrics()  # after close: nothing may be live

    results, took, m = _run(main())
    print(f"\n32 episodes in {took:.1f}s; {m}")
    assert len(results) == 32
    for solve, verdict in results:
        assert verdict.reward == (1.0 if solve else 0.0), verdict.reason
        assert verdict.failure is FailureKind.NONE, verdict.reason
    assert sum(1 for s, _ in results if s) == 16
    assert m.max_live <= cap and m.live == 0
    # a reset each, and a clean sandbox for each SWE episode's grading
    assert m.warm_hits + m.cold_starts == 32 + 16
    left = docker_engine.containers.list(all=True, sparse=True,
                                         filters={"label": "envfactory.pool"})
    assert left == []


def test_container_killed_mid_episode_is_env_collapse(pyclamp, adder, docker_engine):
    async def main():
        async with Pool(max_live=2, spares=0) as pool:
            out = []
            for task in (pyclamp, adder):
                env = make(task, pool=pool)
                await env.reset()
                await env.step(Shell(command="ls"))
                docker_engine.containers.get(env.state().sandbox_id).kill()
                step = await env.step(Shell(command="ls"))
                verdict = await env.verify()
                # Killed with no step in between: verify itself sees the death.
                await env.reset()
                docker_engine.containers.get(env.state().sandbox_id).kill()
                direct = await env.verify()
                await env.close()
                out.append((step, verdict, direct))
            return out

    for step, verdict, direct in _run(main()):
        assert step.terminated and step.info["failure_kind"] is FailureKind.ENV_COLLAPSE
        for v in (verdict, direct):
            assert v.failure is FailureKind.ENV_COLLAPSE and v.is_infrastructure
            assert v.reward is None  # not a 0 the trainer would learn from


def test_verify_timeout_is_honoured(built, base_image, monkeypatch):
    """The tests run under the episode's verify_timeout, else the task's verifier timeout
    (not the task's own 120 s limit), and time out there: the command that ran them is
    seen to have been given that deadline and to have timed out (that an exec's deadline
    holds is tests/envs/test_sandbox.py's)."""
    from envs.sandbox import Sandbox

    loop = built[0]
    slow = terminal_task(base_image, task_id="slow-verifier",
                         tests={"test.sh": "sleep 600\n"}, verifier_timeout_sec=2)
    ran: list[tuple[float | None, bool]] = []  # (deadline, timed out) of every exec
    real_exec = Sandbox.exec

    def spy(self, cmd, *args, **kwargs):
        res = real_exec(self, cmd, *args, **kwargs)
        ran.append((kwargs.get("timeout"), res.timed_out))
        return res

    monkeypatch.setattr(Sandbox, "exec", spy)

    async def main():
        async with Pool(max_live=2, spares=0) as pool:
            env = make(loop.task, pool=pool, verify_timeout=3)
            await env.reset()
            await env.step(ApplyPatch(patch=loop.loop_patch))
            ran.clear()
            hung = await env.verify()
            hung_runs = ran[:]
            await env.close()
            env = make(slow, pool=pool)
            await env.reset()
            ran.clear()
            slow_v = await env.verify()
            slow_runs = ran[:]
            await env.close()
            return hung, hung_runs, slow_v, slow_runs

    hung, hung_runs, slow_v, slow_runs = _run(main())
    assert hung.failure is FailureKind.TIMEOUT and hung.reward == 0.0
    assert [run for run in hung_runs if run[1]] == [(3, True)], hung_runs
    assert slow_v.failure is FailureKind.TIMEOUT and "timed out after 2s" in slow_v.reason
    assert [run for run in slow_runs if run[1]] == [(2, True)], slow_runs


def test_check_env_passes_on_every_sample_task(built, adder):
    async def main():
        async with Pool(max_live=4, spares=0) as pool:
            tasks = [b.task for b in built] + [adder]
            return await asyncio.gather(*(acheck_env(t, pool=pool) for t in tasks))

    reports = _run(main())
    for r in reports:
        assert r.passed, r.summary() + "; " + "; ".join(f"{c.name}: {c.detail}"
                                                         for c in r.failed)
    assert len(reports) == 4


def test_check_env_fails_on_planted_broken_tasks(base_image):
    no_fix = terminal_task(base_image, task_id="broken-solution", solution="true\n")
    free = terminal_task(base_image, task_id="free-reward",
                         tests={"test.sh": "echo 1 > /logs/verifier/reward.txt\n"})
    no_reward = terminal_task(base_image, task_id="no-reward-file", tests={"test.sh": "true\n"})

    async def main():
        async with Pool(max_live=3, spares=0) as pool:
            return await asyncio.gather(*(acheck_env(t, pool=pool)
                                          for t in (no_fix, free, no_reward)))

    r_fix, r_free, r_none = _run(main())
    assert not r_fix.passed and [c.name for c in r_fix.failed] == ["reference_reward_1"]
    assert not r_free.passed and [c.name for c in r_free.failed] == ["noop_reward_0"]
    assert not r_none.passed and "VERIFIER_ERROR" in r_none.failed[0].detail


def test_terminal_verify_keeps_the_agents_services(base_image):
    service = terminal_task(
        base_image, task_id="keep-service", instruction="Keep /tmp/alive fresh, forever.",
        solution="nohup sh -c 'while true; do touch /tmp/alive; sleep 0.2; done' "
                 ">/dev/null 2>&1 &\n",
        tests={"test.sh": "rm -f /tmp/alive; sleep 1; [ -f /tmp/alive ] && r=1 || r=0; "
                          "echo $r > /logs/verifier/reward.txt\n"})

    async def main():
        async with Pool(max_live=1, spares=0) as pool:
            env = make(service, pool=pool)
            await env.reset()
            await env.step(Shell(command=service.solution))
            v = await env.verify()
            await env.close()
            return v

    assert _run(main()).reward == 1.0


def test_missing_image_is_env_collapse():
    task = TerminalTask(task_id="ghost", instruction="x", dockerfile="FROM scratch\n",
                        solution="true", image="envfactory/no-such-image:0")

    async def main():
        async with Pool(max_live=1, spares=0) as pool:
            env = make(task, pool=pool)
            with pytest.raises(EpisodeError) as err:
                await env.reset()
            verdict = await env.verify()
            await env.close()
            return err.value, verdict

    err, verdict = _run(main())
    assert err.failure is FailureKind.ENV_COLLAPSE
    assert verdict.failure is FailureKind.ENV_COLLAPSE and verdict.reward is None


def test_a_chat_model_drives_an_episode_with_tool_calls(pyclamp):
    def call(name: str, args: str, ident: str) -> dict:
        return {"id": ident, "type": "function", "function": {"name": name, "arguments": args}}

    async def main():
        async with Pool(max_live=2, spares=0) as pool:
            env = make(pyclamp, pool=pool, auto_verify=True, max_steps=10)
            await env.reset()
            assert env.tools()[0]["function"]["name"] == "shell"
            steps = [
                # What models really send now and then: none of it may raise.
                await env.step("{ echo a; echo b; } > out.txt"),
                await env.step({"type": "read_file"}),
                await env.step(call("read_file", '{"path": "clamp.py"', "c1")),
                await env.step(call("read_file", '{"path": "clamp.py"}', "c2")),
                await env.step(call("apply_patch", json.dumps({"patch": pyclamp.patch}), "c3")),
                await env.step(call("submit", "{}", "c4")),
            ]
            await env.close()
            return steps

    brace, missing, broken, read, patched, submitted = _run(main())
    assert brace.info["exit_code"] == 0 and brace.info["failure_kind"] is FailureKind.NONE
    for bad in (missing, broken):
        assert bad.info["failure_kind"] is FailureKind.MODEL and not bad.terminated
        assert bad.observation.text.startswith("[not an action: ")
    assert broken.observation.messages[0]["tool_call_id"] == "c1"
    assert read.observation.messages == [{"role": "tool", "tool_call_id": "c2",
                                          "content": read.observation.text}]
    assert "return lo" in read.observation.text
    assert patched.info["failure_kind"] is FailureKind.NONE
    assert submitted.terminated and submitted.reward == 1.0
    assert submitted.info["verdict"].resolved
    assert submitted.observation.messages[0]["tool_call_id"] == "c4"


def test_sync_wrapper(adder):
    with SyncEnvironment(adder) as env:
        obs, _ = env.reset(seed=0)
        assert "/app/input.txt" in obs.text
        env.step(Shell(command=adder.solution))
        assert env.verify().reward == 1.0
        env.reset(seed=0)
        assert env.verify().reward == 0.0
        assert env.state().task_id == "add-numbers"


def _sample_names() -> list[str]:
    from data import samples

    return samples.names()


@pytest.mark.exhaustive
@pytest.mark.parametrize("name", _sample_names())
def test_check_env_on_every_mined_sample_task(name, tmp_home, tmp_path, docker_engine):
    """Every task the pipeline verifies from a sample repository passes check_env
    (mine -> build -> validate takes 1-3 min per repository; opt in with -m exhaustive)."""
    from data import samples
    from envs.registry import Registry
    from repolaunch.pipeline import mine_and_validate
    from tests.repolaunch.test_validate import share_env_specs

    share_env_specs(tmp_home)
    repo = samples.write(samples.get(name), tmp_path / "src")
    with Registry() as reg:
        report = mine_and_validate(repo, registry=reg)
        assert report.verified_ids, f"{name}: nothing verified"

        async def main():
            async with Pool(max_live=2, spares=0) as pool:
                return [await acheck_env(i, pool=pool, registry=reg)
                        for i in report.verified_ids]

        reports = _run(main())
    bad = [r.summary() + ": " + "; ".join(c.detail for c in r.failed)
           for r in reports if not r.passed]
    assert not bad, bad
