"""Policy fixtures: the `tiny` model (same tokenizer as SmolLM2, two random layers).

Under CI the `.[policy]` extra is installed by `.ci/run`, so a missing torch fails the run
instead of skipping these tests."""

from __future__ import annotations

import os

import pytest

if os.environ.get("CI"):
    import torch  # noqa: F401  - CI installs the extra; its absence is a failure
else:
    pytest.importorskip("torch", reason="the .[policy] extra is not installed")


@pytest.fixture(scope="session")
def tiny():
    from policy.model import load_policy

    return load_policy("tiny", seed=0)
