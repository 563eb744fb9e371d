"""Token-in-token-out trajectory records: what the server generated, id for id.

A rollout's turns chain: each turn's prompt is the previous turn's prompt + output + the new
messages' tokens (the server's `prefix_ids`), so the whole trajectory is one token sequence
whose generated spans carry their log-probs and weight version, and whose prompt spans (the
task, tool outputs) carry loss mask 0. The trainer reads these ids as they are.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Turn(_Frozen):
    prompt_ids: tuple[int, ...]
    output_ids: tuple[int, ...]
    logprobs: tuple[float, ...]
    version: int


class Sequence(_Frozen):
    """One training sequence: ids, which positions are trained, and their behaviour data."""

    ids: tuple[int, ...]
    loss_mask: tuple[int, ...]
    logprobs: tuple[float, ...]  # 0.0 where loss_mask is 0
    versions: tuple[int, ...]  # -1 where loss_mask is 0


class Trajectory(_Frozen):
    task_id: str
    rollout_id: str
    group: str  # trajectories of one group share a task and a prompt
    turns: tuple[Turn, ...] = ()
    reward: float | None = None  # None: an infrastructure failure, never counted as 0
    failure: str | None = None  # the failure kind's value, when there was one
    reference: bool = False  # the oracle's answer, not a sample of the policy
    messages: tuple[dict, ...] = Field(default=(), repr=False)

    @property
    def min_version(self) -> int:
        return min((t.version for t in self.turns), default=-1)

    def sequences(self) -> list[Sequence]:
        """The trajectory as few sequences as its turns allow: one when every turn's prompt
        extends the previous prompt + output (the server's prefix_ids), else one per turn."""
        out: list[Sequence] = []
        ids: list[int] = []
        mask: list[int] = []
        lps: list[float] = []
        vers: list[int] = []
        for turn in self.turns:
            if ids and tuple(turn.prompt_ids[:len(ids)]) != tuple(ids):
                out.append(Sequence(ids=tuple(ids), loss_mask=tuple(mask), logprobs=tuple(lps),
                                    versions=tuple(vers)))
                ids, mask, lps, vers = [], [], [], []
            new = turn.prompt_ids[len(ids):]
            ids += new
            mask += [0] * len(new)
            lps += [0.0] * len(new)
            vers += [-1] * len(new)
            ids += turn.output_ids
            mask += [1] * len(turn.output_ids)
            lps += turn.logprobs
            vers += [turn.version] * len(turn.output_ids)
        if ids:
            out.append(Sequence(ids=tuple(ids), loss_mask=tuple(mask), logprobs=tuple(lps),
                                versions=tuple(vers)))
        return out
