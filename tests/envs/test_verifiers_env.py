"""The verifiers environment, run by the real `verifiers` package: the cases in
tests/envs/verifiers_cases.py, in the side venv that holds the `verifiers` extra (it pins
mcp 2, which the main venv's openenv cannot load; tests/envs/verifiers_venv.py)."""

from __future__ import annotations

import os
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
    proc = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
         f"--basetemp={tmp_path / 'cases'}", str(CASES)],
        cwd=verifiers_venv.REPO, env=env, capture_output=True, text=True, timeout=1200)
    tail = (proc.stdout + proc.stderr)[-6000:]
    assert proc.returncode == 0, tail
    assert " passed" in tail and "skipped" not in tail and "failed" not in tail, tail
