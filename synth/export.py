"""Export to, and import from, the Harbor and Terminal-Bench 1 task layouts.

Harbor:  task.toml, instruction.md, environment/Dockerfile (+ build context, and a
         docker-compose.yaml that takes the network away from an offline task),
         tests/test.sh (+ test_outputs.py), solution/solve.sh; the tests write
         /logs/verifier/reward.txt. synth/harbor.py runs them under the real Harbor.
TB1:     task.yaml, Dockerfile (+ build context), docker-compose.yaml, solution.sh,
         run-tests.sh, tests/.
Both carry the oracle mutants (solution/mutants/, mutants/) so a re-import can run the
mutation gate again; importing registers a task only after the same verification.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import tomllib
import yaml

from envs import dockerfiles
from envs.errors import UserError, unknown
from envs.files import atomic_write
from envs.models import Difficulty, TerminalTask
from synth.spec import fingerprint as make_fingerprint
from synth.spec import normalize_instruction

HARBOR_REQUIRED = ("task.toml", "instruction.md", "environment/Dockerfile", "tests/test.sh",
                   "solution/solve.sh")
TB1_REQUIRED = ("task.yaml", "Dockerfile", "docker-compose.yaml", "solution.sh", "run-tests.sh",
                "tests")

COMPOSE = """services:
  client:
    build:
      dockerfile: Dockerfile
    image: ${T_BENCH_TASK_DOCKER_CLIENT_IMAGE_NAME}
    container_name: ${T_BENCH_TASK_DOCKER_CLIENT_CONTAINER_NAME}
    command: [ "sh", "-c", "sleep infinity" ]
    environment:
      - TEST_DIR=${T_BENCH_TEST_DIR}
    volumes:
      - ${T_BENCH_TASK_LOGS_PATH}:${T_BENCH_CONTAINER_LOGS_PATH}
      - ${T_BENCH_TASK_AGENT_LOGS_PATH}:${T_BENCH_CONTAINER_AGENT_LOGS_PATH}
"""

# TB1 runs run-tests.sh with the tests copied to $TEST_DIR (/tests); it grades the output
# and exit code. Ours runs the same offline checks and also writes Harbor's reward file.
RUN_TESTS = """#!/bin/bash
# Offline: the checks need only the image's python3 (no uv, no pip at grading time).
TEST_DIR="${TEST_DIR:-/tests}"
mkdir -p /logs/verifier
if python3 "$TEST_DIR/test_outputs.py"; then echo 1 > /logs/verifier/reward.txt; exit 0; fi
echo 0 > /logs/verifier/reward.txt
exit 1
"""


class LayoutError(UserError):
    """A directory is not a valid task of the named layout; one line."""


def _write(root: Path, rel: str, text: str, mode: int = 0o644) -> None:
    atomic_write(root / rel, text, mode=mode)


def _toml_str(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


# Harbor's docker environment enforces `network_mode = "no-network"` through an egress
# sidecar built from images pinned on Docker Hub, which a host with no registry cannot
# pull. An offline task instead takes the network away from its own container here, which
# Harbor respects ("task-authored networking"), so it runs and is graded offline anywhere.
HARBOR_OFFLINE_COMPOSE = """\
# envfactory: this task runs and is graded with no network.
services:
  main:
    network_mode: none
"""

# The tests read the state the agent left (files, users, processes), which a separate
# verifier container would not see: the verifier shares the agent's sandbox on purpose.
HARBOR_LINT_IGNORE = ("shared-verifier",)


def _toml_list(values: Any) -> str:
    return "[" + ", ".join(_toml_str(str(v)) for v in values) + "]"


def _harbor_toml(task: TerminalTask) -> str:
    passed = [r.gate for r in task.verification if r.passed]
    env = ["[environment]", "build_timeout_sec = 600.0", "cpus = 1", "memory_mb = 1024"]
    if task.network:
        env.append('network_mode = "public"')
    return "\n".join([
        'schema_version = "1.4"', "",
        "[metadata]", 'author_name = "envfactory synth"',
        f"difficulty = {_toml_str(task.difficulty.value)}",
        f"category = {_toml_str(task.category)}",
        f"tags = {_toml_list(task.tags)}", "",
        "[metadata.envfactory]",
        f"task_id = {_toml_str(task.task_id)}", f"family = {_toml_str(task.family)}",
        f"fingerprint = {_toml_str(task.fingerprint)}",
        f"image = {_toml_str(task.image or '')}",
        f"network_mode = {_toml_str('public' if task.network else 'no-network')}",
        f"gates_passed = {_toml_list(passed)}", "",
        "[metadata.harbor.lint]", f"ignore = {_toml_list(HARBOR_LINT_IGNORE)}", "",
        "[verifier]", f"timeout_sec = {task.verifier_timeout_sec}", "",
        "[agent]", f"timeout_sec = {task.agent_timeout_sec}", "",
        *env, "",
    ])


def export_harbor(task: TerminalTask, dest: Path) -> Path:
    root = Path(dest) / task.task_id
    root.mkdir(parents=True, exist_ok=True)
    _write(root, "task.toml", _harbor_toml(task))
    _write(root, "instruction.md", task.instruction)
    _write(root, "environment/Dockerfile", task.dockerfile)
    for rel, text in task.files.items():
        _write(root, f"environment/{rel}", text)
    if not task.network:
        _write(root, "environment/docker-compose.yaml", HARBOR_OFFLINE_COMPOSE)
    for rel, text in task.tests.items():
        _write(root, f"tests/{rel}", text, 0o755 if rel.endswith(".sh") else 0o644)
    _write(root, "solution/solve.sh", task.solution, 0o755)
    for name, text in task.mutants.items():
        _write(root, f"solution/mutants/{name}.sh", text, 0o755)
    return root


def export_tb1(task: TerminalTask, dest: Path) -> Path:
    root = Path(dest) / task.task_id
    root.mkdir(parents=True, exist_ok=True)
    meta = {
        "instruction": task.instruction, "author_name": "envfactory synth",
        "author_email": "unknown", "difficulty": task.difficulty.value,
        "category": task.category, "tags": list(task.tags), "parser_name": "pytest",
        "max_agent_timeout_sec": task.agent_timeout_sec,
        "max_test_timeout_sec": task.verifier_timeout_sec, "run_tests_in_same_shell": False,
        "envfactory": {"task_id": task.task_id, "family": task.family,
                       "fingerprint": task.fingerprint},
    }
    _write(root, "task.yaml", yaml.safe_dump(meta, sort_keys=False, allow_unicode=True))
    _write(root, "Dockerfile", task.dockerfile)
    _write(root, "docker-compose.yaml", COMPOSE)
    for rel, text in task.files.items():
        _write(root, rel, text)
    _write(root, "solution.sh", task.solution, 0o755)
    run_tests = task.tests.get("run-tests.sh", RUN_TESTS)
    _write(root, "run-tests.sh", run_tests, 0o755)
    for rel, text in task.tests.items():
        if rel != "run-tests.sh":
            _write(root, f"tests/{rel}", text, 0o755 if rel.endswith(".sh") else 0o644)
    for name, text in task.mutants.items():
        _write(root, f"mutants/{name}.sh", text, 0o755)
    return root


FORMATS = ("harbor", "tb1", "terminal-bench")


def export(task: TerminalTask, dest: Path, fmt: str) -> Path:
    if fmt == "harbor":
        return export_harbor(task, dest)
    if fmt in ("tb1", "terminal-bench"):
        return export_tb1(task, dest)
    raise unknown("export format", fmt, FORMATS, field="--format")


# --------------------------------------------------------------------------- checks


def detect_layout(path: Path) -> str:
    p = Path(path)
    if (p / "task.toml").is_file():
        return "harbor"
    if (p / "task.yaml").is_file():
        return "tb1"
    raise LayoutError(f"{p} is neither a Harbor (task.toml) nor a TB1 (task.yaml) task")


def check_layout(path: Path, fmt: str | None = None) -> list[str]:
    """Problems with a task directory (empty when it is a valid layout)."""
    p = Path(path)
    fmt = fmt or detect_layout(p)
    problems = []
    required = HARBOR_REQUIRED if fmt == "harbor" else TB1_REQUIRED
    for rel in required:
        if not (p / rel).exists():
            problems.append(f"missing {rel}")
    if problems:
        return problems
    dockerfile = (p / ("environment/Dockerfile" if fmt == "harbor" else "Dockerfile")).read_text()
    steps = dockerfiles.instructions(dockerfile)
    # Docker lets only ARGs (and comments, parser directives) come before the first FROM.
    first = next((i for i in steps if i.name != "ARG"), None)
    if first is None or first.name != "FROM" or not first.value:
        problems.append("Dockerfile does not start with FROM")
    if fmt == "harbor":
        try:
            meta = tomllib.loads((p / "task.toml").read_text())
        except tomllib.TOMLDecodeError as exc:
            return [f"task.toml: {exc}"]
        for section in ("metadata", "verifier", "agent", "environment"):
            if section not in meta:
                problems.append(f"task.toml has no [{section}]")
        if "/logs/verifier/reward" not in "".join(
                f.read_text() for f in (p / "tests").rglob("*") if f.is_file()):
            problems.append("tests never write /logs/verifier/reward.txt or reward.json")
        if not (p / "instruction.md").read_text().strip():
            problems.append("instruction.md is empty")
    else:
        try:
            meta = yaml.safe_load((p / "task.yaml").read_text()) or {}
        except yaml.YAMLError as exc:
            return [f"task.yaml: {str(exc).splitlines()[0]}"]
        if not str(meta.get("instruction", "")).strip():
            problems.append("task.yaml has no instruction")
        if meta.get("difficulty") not in ("easy", "medium", "hard", "unknown"):
            problems.append(f"task.yaml difficulty {meta.get('difficulty')!r} is not valid")
        if not (p / "tests").is_dir():
            problems.append("tests/ is not a directory")
    # The agent must not find tests or solution baked into the image.
    if any(i.name in ("COPY", "ADD") and re.search(r"\b(tests|solution)\b", i.value)
           for i in steps):
        problems.append("Dockerfile copies tests or solution into the image")
    return problems


# --------------------------------------------------------------------------- import


def _read_tree(root: Path, skip: set[str]) -> dict[str, str]:
    out = {}
    for f in sorted(root.rglob("*")):
        rel = f.relative_to(root).as_posix()
        if f.is_file() and rel not in skip and not any(rel.startswith(s + "/") for s in skip):
            out[rel] = f.read_text(errors="replace")
    return out


def _difficulty(value: Any) -> Difficulty:
    try:
        return Difficulty(str(value or "unknown").lower())
    except ValueError:
        return Difficulty.UNKNOWN


def _import_fingerprint(instruction: str, dockerfile: str, files: dict[str, str],
                        tests: dict[str, str]) -> str:
    return make_fingerprint("imported", {"instruction": normalize_instruction(instruction),
                                         "dockerfile": dockerfile, "files": files, "tests": tests})


def load_task(path: Path) -> TerminalTask:
    """A Harbor or TB1 task directory -> TerminalTask (not yet verified)."""
    p = Path(path)
    problems = check_layout(p)
    if problems:
        raise LayoutError(f"{p}: {problems[0]}")
    fmt = detect_layout(p)
    if fmt == "harbor":
        meta = tomllib.loads((p / "task.toml").read_text())
        md, ef = meta.get("metadata", {}), meta.get("metadata", {}).get("envfactory", {})
        instruction = (p / "instruction.md").read_text()
        dockerfile = (p / "environment/Dockerfile").read_text()
        files = _read_tree(p / "environment", {"Dockerfile", "docker-compose.yaml"})
        tests = _read_tree(p / "tests", set())
        solution = (p / "solution/solve.sh").read_text()
        mutants = {f.stem: f.read_text() for f in sorted((p / "solution/mutants").glob("*.sh"))}
        test_command = "bash /tests/test.sh"
        agent_t = float(meta.get("agent", {}).get("timeout_sec", 600.0))
        ver_t = float(meta.get("verifier", {}).get("timeout_sec", 120.0))
        network = meta.get("environment", {}).get("network_mode", "no-network") != "no-network"
        network = network or bool(meta.get("environment", {}).get("allow_internet", False))
    else:
        meta = yaml.safe_load((p / "task.yaml").read_text()) or {}
        md, ef = meta, meta.get("envfactory", {}) or {}
        instruction = str(meta["instruction"])
        dockerfile = (p / "Dockerfile").read_text()
        skip = {"task.yaml", "Dockerfile", "docker-compose.yaml", "solution.sh", "run-tests.sh",
                "tests", "mutants", "solution.yaml"}
        files = _read_tree(p, skip)
        tests = _read_tree(p / "tests", set())
        tests["run-tests.sh"] = (p / "run-tests.sh").read_text()
        solution = (p / "solution.sh").read_text()
        mutants = {f.stem: f.read_text() for f in sorted((p / "mutants").glob("*.sh"))}
        test_command = "bash /tests/run-tests.sh"
        agent_t = float(meta.get("max_agent_timeout_sec", 360.0))
        ver_t = float(meta.get("max_test_timeout_sec", 60.0))
        network = False
    task_id = str(ef.get("task_id") or p.name)
    fp = str(ef.get("fingerprint") or _import_fingerprint(instruction, dockerfile, files, tests))
    return TerminalTask(
        task_id=task_id, instruction=instruction, dockerfile=dockerfile, files=files,
        solution=solution, tests=tests, test_command=test_command,
        family=str(ef.get("family") or "imported"), category=str(md.get("category") or ""),
        difficulty=_difficulty(md.get("difficulty")), tags=[str(t) for t in md.get("tags") or []],
        agent_timeout_sec=agent_t, verifier_timeout_sec=ver_t, network=network,
        mutants=mutants, fingerprint=fp)
