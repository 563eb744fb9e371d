"""The policy's RL infrastructure, measured side by side in one run.

    .venv/bin/python bench/rl.py [--model tiny|smollm2] [--steps 3] [--ranks 4] [--json]

1. **Routing**: the same multi-turn conversations (each turn: the previous prompt + output
   as `prefix_ids`, plus a tool-output message) through the router with prefix-affine and
   with random routing over `--ranks` servers: the prefix-cache hit rate of each, and
   tokens per second per server.
2. **Modes**: the same RL recipe (rollouts of synthesized terminal tasks in Docker, one
   optimizer step and a weight push per step) in `sync` and `async` mode: trajectories per
   second over the whole loop, and the fraction of trained tokens the IS mask drops per step.

The table goes to `docs/policy.md` between `<!-- replicate:rl -->` markers (`--no-write`: print
only). Speed is a ratio of two runs on the same machine in the same process, never an
absolute claim.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from replicate import write_section

DOC = Path(__file__).resolve().parents[1] / "docs" / "policy.md"


async def _conversations(url: str, n: int, turns: int, max_tokens: int) -> None:
    import httpx

    async with httpx.AsyncClient(timeout=600) as client:
        async def one(i: int) -> None:
            messages: list[dict[str, Any]] = [
                {"role": "user", "content": f"Task {i}: find the largest file under /srv/{i} "
                                            "and print its size in bytes."}]
            prefix = None
            for t in range(turns):
                body: dict[str, Any] = {"messages": messages, "max_tokens": max_tokens,
                                        "temperature": 1.0, "seed": i * 10 + t,
                                        "rollout_id": f"conv-{i}"}
                if prefix:
                    body["prefix_ids"] = prefix
                resp = await client.post(url + "/v1/chat/completions", json=body)
                if resp.status_code != 200:
                    raise RuntimeError(f"conversation {i}: HTTP {resp.status_code}: "
                                       f"{resp.text[:200]}")
                r = resp.json()
                tito = r["choices"][0]["tito"]
                prefix = tito["prompt_ids"] + tito["output_ids"]
                messages.append({"role": "assistant", "content": r["choices"][0]["message"]
                                 ["content"] or ""})
                messages.append({"role": "tool", "content": f"output of step {t}: " +
                                 " ".join(f"/srv/{i}/f{k} {k * 117}" for k in range(12))})
        await asyncio.gather(*(one(i) for i in range(n)))


def bench_routing(model: str, ranks: int, n: int, turns: int, max_tokens: int,
                  log: Any) -> dict[str, Any]:
    from policy.cluster import Cluster

    out = {}
    for routing in ("affine", "random"):
        with Cluster(model=model, ranks=ranks, routing=routing) as c:
            t0 = time.monotonic()
            asyncio.run(_conversations(c.url, n, turns, max_tokens))
            wall = time.monotonic() - t0
            s = c.stats()
        per = [r.get("tokens_per_s", 0.0) for r in s["ranks"]]
        out[routing] = {"prefix_hit_rate": s["prefix_hit_rate"], "wall_s": wall,
                        "tokens_per_s_per_server": sum(per) / len(per),
                        "routed": [r["routed"] for r in s["ranks"]],
                        "rebalanced": s["rebalanced"]}
        log(f"routing {routing}: hit rate {s['prefix_hit_rate']:.3f} in {wall:.0f}s")
    rnd = out["random"]["prefix_hit_rate"]
    out["hit_rate_ratio"] = out["affine"]["prefix_hit_rate"] / rnd if rnd else float("inf")
    return out


def bench_modes(model: str, ranks: int, steps: int, group: int, tasks_per_step: int,
                max_tokens: int, log: Any) -> dict[str, Any]:
    import tempfile

    from policy.cluster import Cluster
    from policy.model import load_policy
    from policy.recipes import make_tasks
    from policy.train import Learner, RLConfig, run_rl

    # families on the base image: their images build in seconds, so the bench measures RL
    tasks = make_tasks(["dedupe-lines", "word-frequency", "log-error-count"], 2, 500)
    cfg = RLConfig(group_size=group, max_tokens=max_tokens, max_turns=2, tau=1, min_valid=2,
                   references=1)
    out: dict[str, Any] = {}
    for mode in ("sync", "async"):
        policy = load_policy(model, seed=0)
        work = Path(tempfile.mkdtemp(prefix=f"bench-rl-{mode}-"))
        learner = Learner(policy, lr=1e-4, out_dir=work)
        with Cluster(model=model, ranks=ranks) as c:
            # warm: the task images, and one untimed round of rollouts
            run_rl(learner, tasks, push=c.push, base_url=c.url, cfg=cfg, steps=1, mode="sync",
                   tasks_per_step=tasks_per_step)
            t0 = time.monotonic()
            logs = run_rl(learner, tasks, push=c.push, base_url=c.url, cfg=cfg, steps=steps,
                          mode=mode, tasks_per_step=tasks_per_step)
            wall = time.monotonic() - t0
        trajs = sum(e.trajectories for e in logs)
        out[mode] = {"wall_s": wall, "trajectories": trajs, "traj_per_s": trajs / wall,
                     "masked_frac": [round(e.stats.get("masked_frac", 0.0), 4) for e in logs],
                     "kept_groups": [e.stats.get("kept", 0) for e in logs],
                     "dropped": [e.stats.get("dropped", {}) for e in logs]}
        log(f"mode {mode}: {trajs} trajectories in {wall:.0f}s")
    out["async_over_sync"] = out["async"]["traj_per_s"] / out["sync"]["traj_per_s"]
    return out


def render(args: argparse.Namespace, r: dict[str, Any]) -> str:
    ro, mo = r["routing"], r["modes"]
    cmd = "bench/rl.py " + " ".join(a for a in sys.argv[1:])
    lines = [
        "## Measured: RL infrastructure (`bench/rl.py`)", "",
        f"Measured {datetime.now(timezone.utc):%Y-%m-%d} on this 2-core CPU machine with:", "",
        f"    {cmd.strip()}", "",
        f"Model `{args.model}`, {args.ranks} server ranks.", "",
        "| measure | affine / async | random / sync | ratio | target |",
        "|---|---|---|---|---|",
        f"| prefix-cache hit rate ({args.conversations} conversations × {args.turns} turns) | "
        f"{ro['affine']['prefix_hit_rate']:.3f} | {ro['random']['prefix_hit_rate']:.3f} | "
        f"{ro['hit_rate_ratio']:.2f}× | ≥ 2× |",
        f"| tokens/s per server | {ro['affine']['tokens_per_s_per_server']:.1f} | "
        f"{ro['random']['tokens_per_s_per_server']:.1f} | | |",
        f"| rollout throughput, trajectories/s ({args.steps} steps) | "
        f"{mo['async']['traj_per_s']:.3f} | {mo['sync']['traj_per_s']:.3f} | "
        f"{mo['async_over_sync']:.2f}× | ≥ 1.5× |",
        f"| tokens masked per step (async) | {mo['async']['masked_frac']} | "
        f"{mo['sync']['masked_frac']} | | |",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="tiny")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--conversations", type=int, default=16)
    ap.add_argument("--turns", type=int, default=4)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--group", type=int, default=4)
    ap.add_argument("--tasks-per-step", type=int, default=2)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--skip-modes", action="store_true", help="routing only (no Docker)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)

    def log(msg: str) -> None:
        print(f"{datetime.now():%H:%M:%S} {msg}", file=sys.stderr, flush=True)

    result: dict[str, Any] = {"routing": bench_routing(args.model, args.ranks,
                                                       args.conversations, args.turns,
                                                       args.max_tokens, log)}
    if not args.skip_modes:
        result["modes"] = bench_modes(args.model, min(args.ranks, 2), args.steps, args.group,
                                      args.tasks_per_step, args.max_tokens, log)
    if args.json:
        print(json.dumps(result, indent=2))
    if "modes" in result:
        section = render(args, result)
        if not args.json:
            print(section)
        if not args.no_write:
            write_section(DOC, "rl", section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
