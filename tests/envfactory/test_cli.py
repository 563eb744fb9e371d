"""The command line: --json everywhere, one-line errors, options built from the settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from envs.config import Settings

EXE = str(Path(sys.executable).with_name("envfactory"))


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([EXE, *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})})


def test_every_setting_is_a_global_option():
    proc = cli("--help")
    assert proc.returncode == 0
    for name in Settings.model_fields:
        assert f"--{name.replace('_', '-')}" in proc.stdout


def test_version():
    proc = cli("version")
    assert proc.returncode == 0 and proc.stdout.startswith("envfactory ")


@pytest.mark.docker
def test_unknown_image_is_a_one_line_error(docker_engine, tmp_home):
    proc = cli("images", "build", "cobol")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "unknown image 'cobol'" in lines[0] and "python" in lines[0]


def test_bad_ca_bundle_is_a_one_line_error(tmp_path):
    proc = cli("images", "build", "base", "--ca-bundle", str(tmp_path / "missing.pem"))
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "cannot be read" in proc.stderr


@pytest.mark.docker
def test_images_ls_json(docker_engine, base_image):
    proc = cli("images", "ls", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert any(r["tag"] == base_image and r["current"] for r in rows)


@pytest.mark.docker
def test_images_build_is_a_cache_hit_and_reports_versions(docker_engine, base_image, tmp_home):
    proc = cli("images", "build", "base", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["images"][0]["tag"] == base_image
    assert data["images"][0]["versions"]["debian"].startswith("12")
    assert "building" not in proc.stderr


@pytest.mark.docker
def test_doctor_json(docker_engine, tmp_home):
    proc = cli("doctor", "--json")
    data = json.loads(proc.stdout)
    names = {c["name"]: c for c in data["checks"]}
    assert names["docker engine"]["ok"]
    assert names["CA bundle"]["ok"]
    assert proc.returncode == (0 if data["ok"] else 1)


def test_doctor_without_engine_says_so(tmp_home):
    proc = cli("doctor", "--json", env={"DOCKER_HOST": "unix:///nonexistent/docker.sock"})
    data = json.loads(proc.stdout)
    engine = next(c for c in data["checks"] if c["name"] == "docker engine")
    assert not engine["ok"] and "no Docker engine answers" in engine["detail"]
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1].startswith("error: docker engine:")


@pytest.mark.docker
def test_gc_json(docker_engine):
    proc = cli("gc", "--json")
    assert proc.returncode == 0, proc.stderr
    assert isinstance(json.loads(proc.stdout)["removed"], list)


@pytest.mark.docker
def test_run_synthesizes_registers_and_check_env_passes(docker_engine, tmp_home):
    # The main job's synthesis step on its own (no samples): tasks verified and registered,
    # then the RL trainer's check over the CLI on one of them.
    proc = cli("run", "--no-samples", "--synth", "2", "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    synth = json.loads(proc.stdout)["synth"]
    assert synth["stages"]["verified"] == synth["stages"]["registered"] == 2, synth
    ls = json.loads(cli("synth", "ls", "--json").stdout)
    assert len(ls) == 2
    check = cli("check-env", ls[0]["task_id"], "--json")
    assert check.returncode == 0, check.stdout + check.stderr
    (report,) = json.loads(check.stdout)
    assert report["passed"]
    missing = cli("check-env", "no-such-task")
    assert missing.returncode != 0
    assert "no-such-task" in (missing.stdout + missing.stderr)


def test_run_names_an_unknown_sample_and_the_known_ones(tmp_home):
    proc = cli("run", "--no-mine", "--synth", "0", "-s", "cobol-sample")
    assert proc.returncode != 0
    line = proc.stderr.strip().splitlines()[-1]
    assert "cobol-sample" in line and "py-textkit" in line
