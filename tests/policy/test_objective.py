"""The RL rules against hand-computed values."""

from __future__ import annotations

import math

import pytest
import torch

from policy.objective import fresh, group_advantages, is_mask, masked_pg_loss, select_group
from policy.tito import Trajectory, Turn


def traj(reward, versions=(0,), name="t"):
    turns = tuple(Turn(prompt_ids=(1, 2), output_ids=(3,), logprobs=(-0.5,), version=v)
                  for v in versions)
    return Trajectory(task_id="task", rollout_id=name, group="g", turns=turns, reward=reward)


def test_group_advantages_are_centred_and_scaled_by_the_group_std():
    assert group_advantages([1, 0, 0, 1]) == pytest.approx([1, -1, -1, 1], abs=1e-5)
    std = math.sqrt(0.1875)  # rewards 1,0,0,0: mean 0.25
    assert group_advantages([1, 0, 0, 0]) == pytest.approx(
        [0.75 / std, -0.25 / std, -0.25 / std, -0.25 / std], abs=1e-5)


def test_the_is_mask_is_two_sided_and_a_mask_not_a_clip():
    old = torch.zeros(4)
    new = torch.log(torch.tensor([0.7, 0.85, 1.2, 1.3])).requires_grad_()
    assert is_mask(new, old, 0.2, 0.28).tolist() == [0, 1, 1, 0]
    loss, st = masked_pg_loss(new, old, torch.ones(4), torch.ones(4), eps_low=0.2,
                              eps_high=0.28)
    assert loss.item() == pytest.approx(-(0.85 + 1.2) / 4)
    assert st["masked_frac"] == pytest.approx(0.5)
    loss.backward()
    # masked tokens get no gradient at all; kept ones d(-A r / n)/dlogp = -A r / n
    assert new.grad.tolist() == pytest.approx([0.0, -0.85 / 4, -1.2 / 4, 0.0])


def test_loss_mask_zero_tokens_count_for_nothing():
    new = torch.zeros(3, requires_grad=True)
    loss, st = masked_pg_loss(new, torch.zeros(3), torch.tensor([2.0, 2.0, 2.0]),
                              torch.tensor([1.0, 0.0, 1.0]))
    assert loss.item() == pytest.approx(-2.0)  # (-2 - 2) / 2 trained tokens
    assert st["tokens"] == 2 and st["masked_frac"] == 0


def test_staleness_bound_on_the_oldest_version():
    t = traj(1.0, versions=(3, 4))
    assert not fresh(t, current=5, tau=1)
    assert fresh(t, current=5, tau=2)


def test_infrastructure_failures_are_left_out_never_counted_as_zero():
    d = select_group([traj(1.0), traj(None), traj(0.0)], current=0, tau=0, min_valid=2)
    assert d.reason is None and len(d.kept) == 2
    assert d.advantages == pytest.approx([1, -1], abs=1e-5)  # with None as 0 it would differ
    assert select_group([traj(None), traj(None)], current=0, tau=0, min_valid=1).reason \
        == "infrastructure"


def test_groups_with_equal_rewards_or_too_few_samples_are_dropped_or_padded():
    assert select_group([traj(1.0), traj(1.0)], current=0, tau=0, min_valid=2).reason \
        == "same_reward"
    few = [traj(1.0, name="a"), traj(0.0, name="b"), traj(None), traj(None)]
    assert select_group(few, current=0, tau=0, min_valid=4).reason == "too_few"
    d = select_group(few, current=0, tau=0, min_valid=4, rule="pad")
    assert [t.rollout_id for t in d.kept] == ["a", "b", "a", "b"]
    assert d.advantages == pytest.approx([1, -1, 1, -1], abs=1e-5)
    uneven = [traj(1.0, name="a"), traj(0.0, name="b"), traj(0.0, name="c"), traj(None)]
    d = select_group(uneven, current=0, tau=0, min_valid=4, rule="pad")
    std = math.sqrt(2 / 9)  # rewards 1,0,0: mean 1/3; the copy of "a" keeps a's advantage
    assert [t.rollout_id for t in d.kept] == ["a", "b", "c", "a"]
    assert d.advantages == pytest.approx([2 / 3 / std, -1 / 3 / std, -1 / 3 / std,
                                          2 / 3 / std], abs=1e-5)
    stale = [traj(1.0, versions=(0,)), traj(0.0, versions=(2,)), traj(1.0, versions=(2,))]
    assert len(select_group(stale, current=2, tau=1, min_valid=2).kept) == 2
    with pytest.raises(ValueError, match="known: drop, pad"):
        select_group(few, current=0, tau=0, min_valid=1, rule="clip")


def test_chained_turns_are_one_sequence_with_tool_output_masked():
    t1 = Turn(prompt_ids=(1, 2), output_ids=(3, 4), logprobs=(-0.1, -0.2), version=0)
    t2 = Turn(prompt_ids=(1, 2, 3, 4, 9, 9), output_ids=(5,), logprobs=(-0.3,), version=1)
    (seq,) = Trajectory(task_id="x", rollout_id="r", group="g", turns=(t1, t2),
                        reward=1.0).sequences()
    assert seq.ids == (1, 2, 3, 4, 9, 9, 5)
    assert seq.loss_mask == (0, 0, 1, 1, 0, 0, 1)
    assert seq.logprobs == (0, 0, -0.1, -0.2, 0, 0, -0.3)
    assert seq.versions == (-1, -1, 0, 0, -1, -1, 1)
    t3 = Turn(prompt_ids=(7, 8), output_ids=(6,), logprobs=(-0.4,), version=1)
    assert len(Trajectory(task_id="x", rollout_id="r", group="g", turns=(t1, t3),
                          reward=0.0).sequences()) == 2
