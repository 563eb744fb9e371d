"""The warm sandbox pool on a real engine: the cap holds, creations are rate-limited, spares
are warm hits, in-place restore is used only when provably safe, dead spares are not handed
out, the event loop never blocks, and close leaves nothing behind."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
import requests
from docker.api.client import APIClient

from data import eval_samples
from envs.pool import Pool, Recipe, ResetMode, TokenBucket, percentile
from envs.sandbox import SandboxError

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def pyclamp(docker_engine):
    return eval_samples.build_tasks(["pyclamp"])[0].task


def _ours(client, recipe: Recipe) -> list:
    return client.containers.list(all=True, sparse=True,
                                  filters={"label": f"envfactory.pool={recipe.key}"})


def test_token_bucket_spaces_creations():
    async def main() -> float:
        bucket = TokenBucket(rate=20.0, burst=1)
        t0 = time.monotonic()
        for _ in range(6):
            await bucket.take()
        return time.monotonic() - t0

    assert asyncio.run(main()) >= 5 / 20.0 - 0.02


def test_percentile():
    assert percentile([], 50) is None
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([float(i) for i in range(1, 101)], 95) == 95.0


def test_cap_and_rate_hold_under_contention(docker_engine, base_image):
    recipe = Recipe.make(base_image, labels={"test": "cap"})

    async def main() -> tuple[object, float, int]:
        async with Pool(max_live=3, create_rate=5.0, create_burst=1, spares=0) as pool:
            async def episode() -> None:
                sb = await pool.acquire(recipe)
                assert (await pool.run(sb.exec, "true")).ok
                await asyncio.sleep(0.2)
                await pool.release(sb)

            t0 = time.monotonic()
            await asyncio.gather(*(episode() for _ in range(10)))
            took = time.monotonic() - t0
            m = pool.metrics()
        return m, took, len(_ours(docker_engine, recipe))

    m, took, left = asyncio.run(main())
    assert m.max_live <= 3
    assert m.cold_starts + m.warm_hits == 10
    # burst 1 at 5/s: n creations take at least (n - 1) / 5 s
    assert took >= (m.created - 1) / 5.0 - 0.05
    assert left == 0


def test_spares_are_warm_hits(docker_engine, base_image):
    """The acquire hands out a spare made beforehand (how fast that is, against a fresh
    `docker run`, is bench/reset.py's measure)."""
    recipe = Recipe.make(base_image, labels={"test": "warm"})

    async def main():
        async with Pool(max_live=4, spares=2) as pool:
            await pool.prewarm(recipe)
            spares = {c.id for c in _ours(docker_engine, recipe)}
            sb = await pool.acquire(recipe)
            assert (await pool.run(sb.exec, "echo hi")).stdout == "hi\n"
            await pool.release(sb)
            return pool.metrics(), spares, sb.id

    m, spares, got = asyncio.run(main())
    assert m.warm_hits == 1 and m.cold_starts == 0
    assert len(spares) == 2 and got in spares


def test_restore_in_place_only_when_nothing_outside_the_workdir_changed(docker_engine, pyclamp):
    spec = pyclamp.env_spec
    recipe = Recipe.make(spec.image, workdir=spec.workdir, reset_mode=ResetMode.RESTORE,
                         restore_commit=pyclamp.base_commit, labels={"test": "restore"})

    async def cycle(pool: Pool, dirt: str) -> tuple[str, str, str]:
        sb = await pool.acquire(recipe)
        first = sb.id
        res = await pool.run(sb.exec, dirt)
        assert res.ok, res.output
        await pool.release(sb)
        await pool.settle()  # recycling is in the background; wait for it here
        sb = await pool.acquire(recipe)
        state = await pool.run(sb.exec, "git status --porcelain --untracked-files=all; "
                                        "ls /etc/evil /tmp/x 2>&1; ls /opt >/dev/null && echo opt")
        await pool.release(sb)
        await pool.settle()
        return first, sb.id, state.stdout

    async def main():
        async with Pool(max_live=2, spares=0) as pool:
            inside = await cycle(pool, "echo broken > clamp.py; echo new > new.txt; "
                                       "mkdir -p a/b && touch a/b/c; touch /tmp/x; sleep 300 &")
            restored = pool.metrics().restored
            etc = await cycle(pool, "touch /etc/evil")
            opt = await cycle(pool, "rm -rf /opt")
            # Moving the marker into the future would hide changes from -cnewer: caught.
            hide = await cycle(pool, "touch /etc/evil && touch -d 2099-01-01 "
                                     "/var/tmp/.envfactory-clean")
            return inside, restored, etc, opt, hide, pool.metrics()

    inside, restored, etc, opt, hide, m = asyncio.run(main())
    assert hide[0] != hide[1], "a tampered marker forces a fresh container"
    assert inside[0] == inside[1], "a workdir-only change is restored in place"
    assert restored >= 1
    assert "clamp.py" not in inside[2] and "new.txt" not in inside[2]
    assert "/tmp/x" in inside[2] and "No such file" in inside[2]  # /tmp was wiped
    assert etc[0] != etc[1], "a change in /etc forces a fresh container"
    assert "'/etc/evil': No such file" in etc[2]
    assert opt[0] != opt[1], "a deletion outside the workdir forces a fresh container"
    assert "opt" in opt[2].split()
    assert m.max_live <= 2


def test_a_dead_spare_is_never_handed_out(docker_engine, base_image):
    recipe = Recipe.make(base_image, labels={"test": "dead"})

    async def main():
        async with Pool(max_live=2, spares=1) as pool:
            await pool.prewarm(recipe, 1)
            (spare,) = _ours(docker_engine, recipe)
            docker_engine.containers.get(spare.id).kill()
            sb = await pool.acquire(recipe)
            ok = (await pool.run(sb.exec, "true")).ok
            await pool.release(sb)
            return ok, sb.id, spare.id

    ok, got, dead = asyncio.run(main())
    assert ok and got != dead


def test_no_engine_call_blocks_the_event_loop_and_close_cleans_up(docker_engine, base_image,
                                                                  monkeypatch):
    """Every Docker call runs off the event loop's thread (in the pool's executor), so the
    loop never waits on the engine."""
    recipe = Recipe.make(base_image, labels={"test": "loop"})
    calls: list[int] = []  # the thread of every HTTP request to the engine
    send = requests.Session.send

    def spy(self, *args, **kwargs):
        calls.append(threading.get_ident())
        return send(self, *args, **kwargs)

    async def main():
        loop_thread = threading.get_ident()
        monkeypatch.setattr(APIClient, "send", spy)
        pool = Pool(max_live=4, spares=2)
        sbs = await asyncio.gather(*(pool.acquire(recipe) for _ in range(4)))
        await asyncio.gather(*(pool.run(sb.exec, "true") for sb in sbs))
        for sb in sbs:
            await pool.release(sb)
        await pool.close()
        await pool.close()  # idempotent
        with pytest.raises(SandboxError, match="closed"):
            await pool.acquire(recipe)
        monkeypatch.undo()
        return loop_thread, pool.metrics()

    loop_thread, m = asyncio.run(main())
    assert len(calls) >= 4 * 3, "the spy saw the pool's engine calls (start, exec, remove)"
    on_loop = calls.count(loop_thread)
    assert on_loop == 0, f"{on_loop} of {len(calls)} engine calls ran on the event loop"
    assert m.live == 0 and m.max_live <= 4
    assert _ours(docker_engine, recipe) == []


def test_failed_setup_frees_its_slot(docker_engine, base_image):
    bad = Recipe.make(base_image, setup="echo nope >&2; exit 3", labels={"test": "setup"})

    async def main():
        async with Pool(max_live=1, spares=0) as pool:
            for _ in range(2):  # a leaked slot would make the second wait forever
                with pytest.raises(SandboxError, match="setup failed"):
                    await asyncio.wait_for(pool.acquire(bad), 60)
            return pool.metrics()

    m = asyncio.run(main())
    assert m.create_failures == 2 and m.live == 0
    assert _ours(docker_engine, bad) == []
