"""Recipes: the splits never share a task, RL draws its own tasks, and the statistics of the
pass@1 table match hand-computed values."""

from __future__ import annotations

import pytest

from policy.recipes import Recipe, paired_margin, rl_tasks, split_families, splits, wilson


@pytest.fixture(scope="module")
def recipe():
    return Recipe(name="t", model="tiny", train_per_family=1, rl_per_family=2, eval_per_split=8)


def test_rl_draws_the_training_families_again_from_seeds_no_other_split_uses(recipe):
    data = splits(recipe)
    rl = rl_tasks(recipe)
    train_fams, _ = split_families()
    assert len(rl) == 2 * len(train_fams)
    assert {t.task_id.rsplit("-", 1)[0].removeprefix("pol-") for t in rl} == set(train_fams)
    others = {t.task_id for split in data.values() for t in split}
    assert not others & {t.task_id for t in rl}
    # shuffled: the first steps already mix families (in name order they would hold two)
    assert len({t.task_id.rsplit("-", 1)[0] for t in rl[:8]}) >= 4
    assert [t.task_id for t in rl] == [t.task_id for t in rl_tasks(recipe)]  # seeded


def test_wilson_interval_and_paired_margin_by_hand():
    assert wilson(0, 0) == (0.0, 0.0)
    lo, hi = wilson(16, 64)
    assert round(lo, 3) == 0.160 and round(hi, 3) == 0.368
    # b solves tasks 1 and 2, a solves task 3: mean +1/4 over four paired tasks
    m = paired_margin([0, 0, 1, 0], [1, 1, 0, 0])
    assert m["margin"] == pytest.approx(0.25) and m["n"] == 4
    # differences 1, 1, -1, 0: sample variance 11/12, half-width 1.96 * sqrt(11/12) / 2
    assert m["hi"] - m["margin"] == pytest.approx(1.96 * (11 / 12) ** 0.5 / 2)
    assert m["margin"] - m["lo"] == pytest.approx(m["hi"] - m["margin"])
