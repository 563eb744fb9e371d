"""Consistent hashing with bounded loads on rollout ids."""

from __future__ import annotations

from collections import Counter

import pytest

from policy.router import Ring


def test_a_rollout_id_always_goes_home_and_ids_spread_over_ranks():
    ring = Ring(4)
    assert {ring.pick("rollout-7") for _ in range(10)} == {ring.home("rollout-7")}
    spread = Counter(ring.pick(f"r{i}") for i in range(2000))
    assert set(spread) == {0, 1, 2, 3}
    assert all(250 < n < 750 for n in spread.values())  # each near a quarter


def test_a_full_rank_passes_the_request_to_the_next_on_the_ring():
    ring = Ring(2, c=0.0)
    home = ring.home("busy")
    ring.load[home] = 3  # capacity = ceil((3 + 1) / 2) = 2: home is over it
    other = ring.pick("busy")
    assert other != home and ring.rebalanced == 1
    ring.load[home] = 0
    assert ring.pick("busy") == home


def test_no_rollout_id_goes_to_the_least_loaded_rank():
    ring = Ring(3)
    ring.load[:] = [2, 0, 1]
    assert ring.pick(None) == 1
    with pytest.raises(ValueError):
        Ring(0)
