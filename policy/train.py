"""SFT on reference trajectories, then GRPO-style RL against envfactory's own environments.

- **SFT**: a synthesized terminal task's oracle solution as one `shell` tool call, a SWE
  task's gold patch as one `apply_patch` call, each after the episode's own prompt and tools.
- **RL**: groups of rollouts per task (`policy.rollout`), the group rules and the two-sided
  IS mask of `policy.objective`, a LoRA adapter trained by AdamW, and each new version saved
  and pushed to the servers (`POST /weights` through the router).
- **Modes**: `sync` generates a batch of groups, trains on it, pushes, in turn (colocated);
  `async` keeps a rollout worker generating with whatever version the servers hold while the
  learner trains, and the staleness bound tau drops samples that fell too far behind.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from policy.chat import IM_END, render, tool_call_text
from policy.model import Policy, save_adapter
from policy.objective import masked_pg_loss, select_group
from policy.tito import Sequence as TokSeq
from policy.tito import Trajectory


@dataclass
class RLConfig:
    group_size: int = 4
    eps_low: float = 0.2
    eps_high: float = 0.28
    tau: int = 1  # staleness bound on weight versions
    min_valid: int = 2
    group_rule: str = "drop"
    lr: float = 1e-4
    temperature: float = 1.0
    max_turns: int = 3
    max_tokens: int = 256
    references: int = 0  # oracle trajectories added to each group (off-policy, IS-masked)


# ---------------------------------------------------------------- reference trajectories


def reference_target(task: Any) -> str:
    """The oracle as the model should write it: one tool call, then the end of the turn."""
    from envs.models import SWETask

    if isinstance(task, SWETask):
        return tool_call_text("apply_patch", {"patch": task.patch}) + IM_END
    # solve.sh without its shebang, `set -e` and step comments: the commands themselves
    steps = [ln for ln in task.solution.splitlines()
             if ln.strip() and not ln.lstrip().startswith("#") and ln.strip() != "set -e"]
    return tool_call_text("shell", {"command": "\n".join(steps)}) + IM_END


def sft_example(policy: Policy, task: Any) -> TokSeq:
    """Prompt (the episode's first observation, with the tools) + the reference answer."""
    from envs.actions import Observation
    from envs.actions import tools as action_tools
    from envs.api import prompt_of

    tok = policy.tokenizer
    messages = [dict(m) for m in Observation.prompt(prompt_of(task)).messages]
    prompt = tok.encode(render(messages, action_tools()), add_special_tokens=False)
    target = tok.encode(reference_target(task), add_special_tokens=False)
    ids = tuple(prompt) + tuple(target)
    return TokSeq(ids=ids, loss_mask=(0,) * len(prompt) + (1,) * len(target),
                  logprobs=(0.0,) * len(ids), versions=(-1,) * len(ids))


# ---------------------------------------------------------------- the learner


class Learner:
    """Owns the trainable copy of the policy, its optimizer and its version counter."""

    def __init__(self, policy: Policy, *, lr: float = 1e-4, out_dir: Path,
                 temperature: float = 1.0) -> None:
        import torch

        self.policy = policy
        self.out_dir = out_dir
        self.temperature = temperature
        self.version = 0
        params = [p for p in policy.model.parameters() if p.requires_grad]
        self.opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)

    def _logprobs(self, seq: TokSeq, temperature: float | None = None) -> tuple[Any, Any]:
        """Log-probs of the trained positions under the current weights, and their index, at
        the temperature the behaviour log-probs were taken at."""
        import torch

        ids = torch.tensor([seq.ids], device=self.policy.device)
        temp = max(temperature if temperature is not None else self.temperature, 1e-5)
        logits = self.policy.model(input_ids=ids).logits[0, :-1].float() / temp
        logp = torch.log_softmax(logits, -1).gather(1, ids[0, 1:, None])[:, 0]
        pos = torch.tensor([i - 1 for i, m in enumerate(seq.loss_mask) if m and i > 0],
                           device=self.policy.device)
        return logp[pos], pos + 1

    def sft_step(self, batch: Sequence[TokSeq]) -> float:
        self.policy.model.train()
        self.opt.zero_grad()
        total = 0.0
        n = sum(sum(s.loss_mask) for s in batch) or 1
        for seq in batch:
            logp, _ = self._logprobs(seq, 1.0)
            loss = -logp.sum() / n
            loss.backward()
            total += loss.item()
        self.opt.step()
        self.policy.model.eval()
        return total

    def rl_step(self, groups: Sequence[Sequence[Trajectory]], cfg: RLConfig) -> dict[str, Any]:
        """One optimizer step over the groups the rules keep; the counts say what was not."""
        import torch

        stats: dict[str, Any] = {"groups": len(groups), "kept": 0, "dropped": {},
                                 "masked_frac": 0.0, "tokens": 0.0, "loss": 0.0}
        sampled = [t.reward for g in groups for t in g if not t.reference]
        valid = [r for r in sampled if r is not None]
        stats["sampled_reward"] = sum(valid) / len(valid) if valid else None
        stats["infrastructure"] = len(sampled) - len(valid)
        work: list[tuple[TokSeq, float]] = []
        for group in groups:
            d = select_group(list(group), current=self.version, tau=cfg.tau,
                             min_valid=cfg.min_valid, rule=cfg.group_rule)
            if d.reason:
                stats["dropped"][d.reason] = stats["dropped"].get(d.reason, 0) + 1
                continue
            stats["kept"] += 1
            for traj, adv in zip(d.kept, d.advantages, strict=True):
                work += [(seq, adv) for seq in traj.sequences()]
        if not work:
            return stats
        self.policy.model.train()
        self.opt.zero_grad()
        n_tok = sum(sum(s.loss_mask) for s, _ in work) or 1
        masked = 0.0
        for seq, adv in work:
            logp, pos = self._logprobs(seq, cfg.temperature)
            old = torch.tensor([seq.logprobs[i] for i in pos.tolist()], device=logp.device)
            mask = torch.ones_like(old)
            loss, st = masked_pg_loss(logp, old, torch.full_like(old, adv), mask,
                                      eps_low=cfg.eps_low, eps_high=cfg.eps_high)
            (loss * (st["tokens"] / n_tok)).backward()  # token mean over the whole step
            masked += st["masked_frac"] * st["tokens"]
            stats["loss"] += loss.item() * st["tokens"] / n_tok
        self.opt.step()
        self.policy.model.eval()
        stats["tokens"] = float(n_tok)
        stats["masked_frac"] = masked / n_tok
        return stats

    def publish(self) -> Path:
        """Bump the version and write its adapter where the servers can read it."""
        self.version += 1
        return save_adapter(self.policy.adapter_state(),
                            self.out_dir / f"adapter-v{self.version}.safetensors",
                            {"version": str(self.version), "model": self.policy.name})


# ---------------------------------------------------------------- the loops


@dataclass
class StepLog:
    step: int
    version: int
    wall_s: float
    rollout_s: float
    train_s: float
    trajectories: int
    stats: dict[str, Any] = field(default_factory=dict)


def run_rl(learner: Learner, tasks: Sequence[Any], *, push: Callable[[Path, int], Any],
           base_url: str, cfg: RLConfig, steps: int, mode: str = "sync", pool: Any = None,
           tasks_per_step: int = 2, log: Callable[[StepLog], None] | None = None,
           concurrency: int = 8) -> list[StepLog]:
    """RL for `steps` optimizer steps, in `sync` or `async` mode; a log line per step."""
    from policy.rollout import rollout_groups

    if mode not in ("sync", "async"):
        raise ValueError(f"unknown mode {mode!r}; known: sync, async")
    logs: list[StepLog] = []
    t_start = time.monotonic()

    def batch_tasks(i: int) -> list[Any]:
        return [tasks[(i * tasks_per_step + j) % len(tasks)] for j in range(tasks_per_step)]

    def generate(i: int) -> tuple[list[list[Trajectory]], float]:
        t0 = time.monotonic()
        groups = asyncio.run(rollout_groups(
            batch_tasks(i), base_url=base_url, group_size=cfg.group_size, pool=pool,
            concurrency=concurrency, tag=f"s{i}", max_turns=cfg.max_turns,
            references=cfg.references,
            max_tokens=cfg.max_tokens, temperature=cfg.temperature))
        return groups, time.monotonic() - t0

    def train_on(i: int, groups: list[list[Trajectory]], rollout_s: float) -> None:
        t0 = time.monotonic()
        stats = learner.rl_step(groups, cfg)
        if stats["kept"]:  # no step taken: no new version (it would only age the samples)
            push(learner.publish(), learner.version)
        entry = StepLog(step=i, version=learner.version, wall_s=time.monotonic() - t_start,
                        rollout_s=rollout_s, train_s=time.monotonic() - t0,
                        trajectories=sum(len(g) for g in groups), stats=stats)
        logs.append(entry)
        if log:
            log(entry)

    if mode == "sync":
        for i in range(steps):
            groups, rs = generate(i)
            train_on(i, groups, rs)
        return logs

    _run_async(tasks, steps=steps, tasks_per_step=tasks_per_step, cfg=cfg, base_url=base_url,
               pool=pool, concurrency=concurrency, train_on=train_on)
    return logs


def _run_async(tasks: Sequence[Any], *, steps: int, tasks_per_step: int, cfg: RLConfig,
               base_url: str, pool: Any, concurrency: int,
               train_on: Callable[[int, list[list[Trajectory]], float], None]) -> None:
    """Streaming rollouts: a worker keeps `concurrency` episodes running without a batch
    barrier, starting a new group as soon as a slot frees, and the learner trains on the first
    `tasks_per_step` groups to finish. A straggler never holds a step back (in sync mode the
    slowest episode of a batch does), and training overlaps generation. At most two batches
    of groups are started and not yet trained on (`tickets`), so samples trail the weights by
    about one version; tau drops what falls further behind."""
    import queue

    from policy.rollout import group_rollouts, http_client, pool_scope

    n_groups = steps * tasks_per_step
    done: queue.Queue[list[Trajectory] | BaseException] = queue.Queue()
    tickets = threading.Semaphore(2 * tasks_per_step)
    stop = threading.Event()

    async def stream() -> None:
        sem = asyncio.Semaphore(concurrency)
        started: list[asyncio.Task[None]] = []

        async def one(k: int) -> None:
            try:
                g = await group_rollouts(tasks[k % len(tasks)], client=client, sem=sem,
                                         base_url=base_url, group_size=cfg.group_size,
                                         group=f"g{k}", pool=pool, references=cfg.references,
                                         temperature=cfg.temperature, max_turns=cfg.max_turns,
                                         max_tokens=cfg.max_tokens)
                done.put(g)
            except BaseException as e:  # the learner re-raises it
                done.put(e)

        async with http_client() as client, pool_scope(pool):
            for k in range(n_groups):
                while not stop.is_set() and not await asyncio.to_thread(tickets.acquire,
                                                                        True, 1.0):
                    pass
                if stop.is_set():
                    break
                started.append(asyncio.create_task(one(k)))
            # When the learner stopped early, the groups running are let finish rather than
            # cancelled: a cancelled episode can leave a sandbox its executor thread was
            # still starting. Each is bounded by its step and verify timeouts.
            await asyncio.gather(*started, return_exceptions=True)

    def producer() -> None:
        try:
            asyncio.run(stream())
        except BaseException as e:
            done.put(e)

    th = threading.Thread(target=producer, name="rollout-worker", daemon=True)
    th.start()
    try:
        for i in range(steps):
            t0 = time.monotonic()
            groups: list[list[Trajectory]] = []
            while len(groups) < tasks_per_step:
                item = done.get()
                if isinstance(item, BaseException):
                    raise item
                groups.append(item)
            train_on(i, groups, time.monotonic() - t0)
            for _ in range(tasks_per_step):
                tickets.release()
    finally:
        stop.set()
        th.join(timeout=600)


def write_log(path: Path, entry: StepLog) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fh.write(json.dumps(asdict(entry)) + "\n")
