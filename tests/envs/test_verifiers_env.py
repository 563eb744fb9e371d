"""The verifiers environment, run by the real `verifiers` package: the cases in
tests/envs/verifiers_cases.py, in the side venv that holds the `verifiers` extra (it pins
mcp 2, which the main venv's openenv cannot load; tests/envs/verifiers_venv.py)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.envs import verifiers_venv

pytestmark = pytest.mark.docker

CASES = Path(__file__).with_name("verifiers_cases.py")


def test_the_verifiers_cases_pass_under_verifiers_itself(docker_engine, tmp_path):
    try:
        python = verifiers_venv.ensure()
    except verifiers_venv.SideVenvError as exc:
        pytest.fail(f"could not make the verifiers venv: {exc}", pytrace=False)
    # CI set: a missing engine or extra inside is a failure there too, never a skip.
    env = {**os.environ, "CI": "true"}
    # addopts cleared: the suite's --durations would print test names ("..._failed_...")
    # into the tail that the summary line is read from.
    proc = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", "-o", "addopts=",
         f"--basetemp={tmp_path / 'cases'}", str(CASES)],
        cwd=verifiers_venv.REPO, env=env, capture_output=True, text=True, timeout=1200)
    tail = (proc.stdout + proc.stderr)[-6000:]
    assert proc.returncode == 0, tail
    # The closing summary alone: "5 passed in 30.62s", with no skipped, failed or error count.
    summary = [ln for ln in tail.splitlines() if re.search(r"\d+ passed\b.* in [\d.]+s", ln)]
    assert summary, tail
    assert not re.search(r"\d+ (skipped|failed|errors?|xfailed)\b", summary[-1]), tail
