"""The real Harbor (PyPI `harbor`, its own Python 3.12 venv) on an exported, verified task:
`harbor lint` passes, its oracle agent gets reward 1 and its nop agent 0, on our local
base image with no registry."""

from __future__ import annotations

import os

import pytest

from synth.export import export
from synth.harbor import PYTHON_ENV, HarborError, ensure, find_python
from tests.synth.conftest import seeded_task

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def harbor(docker_engine):
    if find_python() is None:
        message = (f"harbor needs Python >= 3.12 and none was found (set {PYTHON_ENV} or "
                   "install one with pyenv)")
        if os.environ.get("CI"):
            pytest.fail(f"CI is set and {message}", pytrace=False)
        pytest.skip(message)
    try:
        return ensure()
    except HarborError as exc:
        pytest.fail(f"could not install harbor: {exc}", pytrace=False)


def test_exported_task_passes_real_harbor(harbor, tmp_path):
    from synth.verify import verify

    task, outcome = verify(seeded_task("dedupe-lines", seed=31))
    assert outcome.passed, outcome.detail
    root = export(task, tmp_path / "tasks", "harbor")

    report = harbor.check(root, tmp_path / "jobs")
    assert report.lint == []
    assert report.reward("oracle") == 1.0, report.trials
    assert report.reward("nop") == 0.0, report.trials
    assert report.ok
