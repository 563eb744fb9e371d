"""A toy trainer loop over envfactory: sample tasks, run episodes concurrently, print rewards.

    .venv/bin/python examples/rl_loop.py [--episodes 16] [--max-live 8] [--seed 0] [--samples]

Tasks come from the registry (`envs.find_tasks`, train side of a split by repository); with
`--samples`, or when the registry has none with a built image, from the bundled sample tasks.
The "policy" is scripted: for each episode it flips a seeded coin and either applies the
task's reference solution or just looks around. A real trainer puts a model there; the rest
of the loop — reset, step, verify, drop infrastructure failures — stays the same.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import envs
from envs.api import ApplyPatch, Environment, Shell, Submit, Task
from envs.models import SWETask, TerminalTask


def sample_tasks() -> list[Task]:
    """The bundled SWE samples plus one small terminal task (built on first use)."""
    from data import eval_samples
    from envs import images

    base = images.ensure("base").tag
    adder = TerminalTask(
        task_id="example-add", instruction="Write the sum of /app/input.txt to /app/answer.txt.",
        dockerfile=f"FROM {base}\nWORKDIR /app\nCOPY app/ /app/\n",
        files={"app/input.txt": "3 4\n"},
        solution="read a b < /app/input.txt; echo $((a + b)) > /app/answer.txt\n",
        tests={"test.sh": '[ "$(cat /app/answer.txt)" = 7 ] && echo 1 > '
                          "/logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n"},
        family="example")
    return [b.task for b in eval_samples.build_tasks()] + [adder]


def registry_tasks() -> list[Task]:
    """Train-side tasks from the registry that can run (an SWE task needs a built image)."""
    found = envs.find_tasks()
    runnable = [t for t in found if not isinstance(t, SWETask) or
                (t.env_spec is not None and t.env_spec.image)]
    return envs.split_tasks(runnable, test_fraction=0.2).train


async def episode(pool: envs.Pool, task: Task, rng: random.Random, i: int) -> dict:
    """One rollout with the scripted policy."""
    env = Environment(task, pool=pool, max_steps=8)
    solve = rng.random() < 0.5
    try:
        obs, info = await env.reset(seed=i, rollout_id=f"rollout-{i}")
        messages = list(obs.messages)  # what a chat model would be sent
        for action in policy(task, solve):
            step = await env.step(action)
            messages += step.observation.messages
            if step.terminated or step.truncated:
                break
        verdict = await env.verify()
        return {"task": env.task_id, "solve": solve, "reward": verdict.reward,
                "failure": verdict.failure.value, "infra": verdict.is_infrastructure,
                "turns": env.state().step_count, "reset_s": info["reset_s"]}
    except envs.api.EpisodeError as exc:  # the environment could not be made: drop it
        return {"task": env.task_id, "solve": solve, "reward": None,
                "failure": exc.failure.value, "infra": True, "turns": 0, "reset_s": 0.0}
    finally:
        await env.close()


def policy(task: Task, solve: bool) -> list:
    acts: list = [Shell(command="ls -la")]
    if solve:
        if isinstance(task, SWETask):
            acts.append(ApplyPatch(patch=task.patch))
        else:
            acts.append(Shell(command=task.solution))
    acts.append(Submit())
    return acts


async def main_async(args: argparse.Namespace) -> int:
    tasks = [] if args.samples else registry_tasks()
    source = "registry"
    if not tasks:
        tasks, source = sample_tasks(), "bundled samples"
    rng = random.Random(args.seed)
    batch = envs.sample_tasks(tasks, args.episodes, seed=args.seed, replace=True)
    print(f"{len(batch)} episodes over {len({envs.api.task_id_of(t) for t in batch})} task(s) "
          f"from the {source}, at most {args.max_live} sandboxes live")
    t0 = time.monotonic()
    async with envs.Pool(max_live=args.max_live, spares=2) as pool:
        # Build images and start spares before the clock matters (one env per distinct task).
        distinct = {envs.api.task_id_of(t): t for t in batch}
        await asyncio.gather(*(Environment(t, pool=pool).prepare(1) for t in distinct.values()),
                             return_exceptions=True)
        t0 = time.monotonic()
        results = await asyncio.gather(*(episode(pool, t, rng, i) for i, t in enumerate(batch)))
    took = time.monotonic() - t0
    for r in results:
        reward = "dropped" if r["infra"] else f"{r['reward']:.1f}"
        print(f"  {r['task']:<32} solve={r['solve']!s:<5} reward={reward:<7} "
              f"failure={r['failure']:<14} turns={r['turns']} reset={r['reset_s'] * 1000:.0f}ms")
    kept = [r for r in results if not r["infra"]]
    mean = sum(r["reward"] for r in kept) / len(kept) if kept else float("nan")
    m = pool.metrics()
    print(f"{len(kept)} kept, {len(results) - len(kept)} dropped (infrastructure); mean reward "
          f"{mean:.2f}; failures {dict(Counter(r['failure'] for r in results))}")
    print(f"{took:.1f}s; pool: max live {m.max_live} of {m.cap}, warm hits {m.warm_hits}, "
          f"cold starts {m.cold_starts}, reset p50 {1000 * (m.reset_p50_s or 0):.0f} ms")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=16)
    ap.add_argument("--max-live", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--samples", action="store_true", help="use the bundled sample tasks")
    return asyncio.run(main_async(ap.parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
