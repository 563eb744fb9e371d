"""Harbor and TB1 export pass a layout check; an exported task re-imported verifies again."""

from __future__ import annotations

import pytest
import tomllib
import yaml

from envs.registry import Registry
from synth.export import check_layout, export, load_task
from synth.pipeline import import_task
from tests.synth.conftest import seeded_task


@pytest.fixture(scope="module")
def task():
    # Implemented without the engine: only the FROM line needs the base image's tag.
    from synth.draft import draft
    from synth.families import get_family
    from synth.implement import from_blueprint

    fam = get_family("regex-iso-dates")
    d = draft(fam, 11, task_id="export-me")
    return from_blueprint(d, fam.implement(d.params), tag="envfactory/base:bookworm-test")


def test_harbor_layout(task, tmp_path):
    root = export(task, tmp_path, "harbor")
    assert check_layout(root) == []
    for rel in ("task.toml", "instruction.md", "environment/Dockerfile", "tests/test.sh",
                "solution/solve.sh"):
        assert (root / rel).is_file(), rel
    meta = tomllib.loads((root / "task.toml").read_text())
    assert meta["metadata"]["category"] == "regex"
    # Harbor's own no-network mode needs an egress sidecar pulled from Docker Hub: offline
    # tasks say so in our metadata and cut the network in their compose file instead.
    assert "network_mode" not in meta["environment"]
    assert meta["metadata"]["envfactory"]["network_mode"] == "no-network"
    assert "network_mode: none" in (root / "environment/docker-compose.yaml").read_text()
    assert (root / "instruction.md").read_text() == task.instruction
    assert "/logs/verifier/reward.txt" in (root / "tests/test.sh").read_text()
    assert (root / "tests/test.sh").stat().st_mode & 0o111
    assert list((root / "solution/mutants").glob("*.sh"))


def test_tb1_layout(task, tmp_path):
    root = export(task, tmp_path, "tb1")
    assert check_layout(root) == []
    for rel in ("task.yaml", "Dockerfile", "docker-compose.yaml", "solution.sh",
                "run-tests.sh", "tests/test_outputs.py"):
        assert (root / rel).exists(), rel
    meta = yaml.safe_load((root / "task.yaml").read_text())
    assert meta["instruction"] == task.instruction
    assert meta["difficulty"] == task.difficulty.value
    assert meta["parser_name"] == "pytest"
    assert "services:" in (root / "docker-compose.yaml").read_text()
    assert "pip install" not in (root / "run-tests.sh").read_text()


@pytest.mark.parametrize("fmt", ["harbor", "tb1"])
def test_round_trip_keeps_the_task(task, tmp_path, fmt):
    back = load_task(export(task, tmp_path, fmt))
    assert back.task_id == task.task_id and back.instruction == task.instruction
    assert back.dockerfile == task.dockerfile and back.files == task.files
    assert back.solution == task.solution and back.mutants == task.mutants
    assert back.fingerprint == task.fingerprint and back.family == task.family
    assert back.tests["test_outputs.py"] == task.tests["test_outputs.py"]


def test_layout_check_names_what_is_missing(task, tmp_path):
    root = export(task, tmp_path, "harbor")
    (root / "solution/solve.sh").unlink()
    assert check_layout(root) == ["missing solution/solve.sh"]
    root = export(task, tmp_path / "tb", "tb1")
    (root / "run-tests.sh").unlink()
    assert "missing run-tests.sh" in check_layout(root)


def test_layout_check_reads_the_dockerfile_as_docker_does(task, tmp_path):
    """`envs.dockerfiles` (dockerfile-parse). Comments, parser directives and ARGs may come
    before FROM, in any case (the regex wanted FROM first); a COPY of the tests split over
    lines is still one (the regex read one line)."""
    root = export(task, tmp_path, "harbor")
    dockerfile = root / "environment/Dockerfile"
    body = dockerfile.read_text().split("\n", 1)[1]
    base = task.dockerfile.split("\n", 1)[0].split()[1]
    dockerfile.write_text(f"# syntax=docker/dockerfile:1\nARG BASE={base}\nfrom $BASE\n{body}")
    assert check_layout(root) == []
    dockerfile.write_text(f"RUN true\nFROM {base}\n{body}")
    assert check_layout(root) == ["Dockerfile does not start with FROM"]
    dockerfile.write_text(f"FROM {base}\n{body}COPY \\\n    tests/ /tests/\n")
    assert check_layout(root) == ["Dockerfile copies tests or solution into the image"]


def test_not_a_task_directory(tmp_path):
    with pytest.raises(ValueError, match="neither a Harbor"):
        load_task(tmp_path)


@pytest.mark.docker
@pytest.mark.parametrize("fmt", ["harbor", "tb1"])
def test_exported_task_reimported_verifies_and_registers(docker_engine, tmp_home, tmp_path, fmt):
    task = seeded_task("regex-iso-dates", seed=77)
    root = export(task, tmp_path, fmt)
    with Registry() as reg:
        verified, outcome = import_task(root, registry=reg)
        assert outcome.passed, outcome.detail
        assert outcome.registered
        got = reg.get_terminal_task(task.task_id)
    assert got is not None and got.image == verified.image
    assert sum(r.gate.startswith("oracle#") for r in got.verification) == 3
    assert any(r.gate.startswith("mutant:") for r in got.verification)


@pytest.mark.docker
def test_a_tb1_task_whose_tests_install_at_grading_is_rejected(docker_engine, tmp_home, tmp_path):
    task = seeded_task("dedupe-lines", seed=5)
    root = export(task, tmp_path, "tb1")
    # The stock TB1 run-tests.sh fetches uv and pytest at grading time.
    (root / "run-tests.sh").write_text(
        "#!/bin/bash\napt-get update && apt-get install -y curl\n"
        "curl -LsSf https://astral.sh/uv/0.7.13/install.sh | sh\nuv run pytest $TEST_DIR\n")
    with Registry() as reg:
        _, outcome = import_task(root, registry=reg)
        assert outcome.failed_gate is not None and outcome.failed_gate.value == "hermetic"
        assert reg.get_terminal_task(task.task_id) is None
