"""Shared synth fixtures: one seeded task per family, verified once for the session."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from synth.draft import draft
from synth.families import all_families, get_family
from synth.implement import implement

SEED = 20260


def seeded_task(name: str, seed: int = SEED):
    return implement(draft(get_family(name), seed, task_id=f"t-{name}"))


@pytest.fixture(scope="session")
def verified_families(docker_engine):
    """family -> (task, outcome) for one seeded task of every family, all gates for real.

    Verified in a small thread pool (containers mostly wait on the engine), once."""
    from synth.verify import verify

    def one(name: str):
        return name, verify(seeded_task(name))

    with ThreadPoolExecutor(max_workers=3) as pool:
        return dict(pool.map(one, list(all_families())))


@pytest.fixture(scope="session")
def small_task(docker_engine):
    """A cheap, valid task (base image) to plant defects into."""
    return seeded_task("dedupe-lines")
