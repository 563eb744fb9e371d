"""Every sample repository builds with no per-repository configuration, and its per-test
results equal what its generator planted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from data import samples
from repolaunch.build import launch

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    return tmp_path_factory.mktemp("samples")


@pytest.mark.parametrize("name", samples.names())
def test_sample_builds_and_its_results_are_what_was_planted(name, written, docker_engine):
    sample = samples.get(name)
    repo = samples.write(sample, written)
    result = launch(repo)
    assert result.ok, f"{name}: {result.failure}"
    assert result.plan.language == sample.language
    assert result.detection.build_system == sample.build_system
    got = {r.test_id: r.status for r in result.results}
    assert got == sample.expected, {
        "missing": sorted(set(sample.expected) - set(got)),
        "unexpected": sorted(set(got) - set(sample.expected)),
        "different": sorted(k for k in got if k in sample.expected and got[k] != sample.expected[k]),
    }


def test_cli_launch_json(written, docker_engine):
    repo = samples.write(samples.get("c-strutil"), written / "cli")
    exe = str(Path(sys.executable).with_name("envfactory"))
    proc = subprocess.run([exe, "launch", str(repo), "--json"], capture_output=True, text=True,
                          timeout=900, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(proc.stdout)
    assert data["ok"] and data["language"] == "c" and data["tests_found"] > 0
    assert data["image"].startswith("envfactory/env-c-strutil:") or "/env-c-strutil:" in data["image"]
    assert Path(data["transcript"]).is_file()
