"""Stage 2, implement: a draft -> a TerminalTask with Dockerfile, files, oracle, tests.

The environment is a thin layer on one of the content-addressed base images (no network,
nothing installed); the oracle is `solve.sh` made of marked steps (generic mutants drop
steps); the tests are `tests/test.sh`, which runs `tests/test_outputs.py` with the base
image's python3 and writes the reward to /logs/verifier/reward.txt (Harbor's contract).
"""

from __future__ import annotations

import base64
import functools
import shlex

from envs import images
from envs.models import TerminalTask
from synth.families import get_family
from synth.families._kit import CHECK_PREAMBLE
from synth.spec import Blueprint, TaskDraft

STEP_MARK = "# --- step"
REWARD_FILE = "/logs/verifier/reward.txt"

TEST_SH = """#!/bin/bash
# Grading: hermetic (runs offline, installs nothing), writes the reward Harbor reads.
mkdir -p /logs/verifier
if python3 /tests/test_outputs.py > /logs/verifier/test-stdout.txt 2>&1; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
cat /logs/verifier/test-stdout.txt
"""

RUNNER = '''

if __name__ == "__main__":
    import sys
    import traceback

    _names = sorted(n for n, f in list(globals().items()) if n.startswith("test_") and callable(f))
    _results = []
    for _n in _names:
        try:
            globals()[_n]()
            _results.append(("PASSED", _n))
        except Exception as _exc:  # every failure is a failed check, not a crash
            _results.append(("FAILED", _n))
            print(f"{_n}: {type(_exc).__name__}: {_exc}")
            traceback.print_exc(limit=1)
    print("=========================== short test summary info ============================")
    for _s, _n in _results:
        print(f"{_s} test_outputs.py::{_n}")
    sys.exit(0 if _names and all(s == "PASSED" for s, _ in _results) else 1)
'''


class ImplementError(RuntimeError):
    """A draft could not be implemented; one line."""


@functools.cache
def base_tag(name: str) -> str:
    """The tag of a base image (built once if missing); cached per process."""
    return images.ensure(name).tag


def script(steps: tuple[str, ...] | list[str]) -> str:
    """A solve.sh from steps, each under a marker so mutants can drop whole steps."""
    body = "".join(f"{STEP_MARK} {i + 1} ---\n{s.rstrip()}\n" for i, s in enumerate(steps))
    return "#!/bin/bash\nset -e\n" + body


def steps_of(solution: str) -> list[str]:
    """The marked steps of a solve.sh (one step: the whole body if it has no markers)."""
    lines = solution.splitlines()
    body = [ln for ln in lines if not ln.startswith("#!") and ln.strip() != "set -e"]
    if not any(ln.startswith(STEP_MARK) for ln in body):
        return ["\n".join(ln for ln in body if ln.strip())] if any(
            ln.strip() for ln in body) else []
    out: list[list[str]] = []
    for ln in body:
        if ln.startswith(STEP_MARK):
            out.append([])
        elif out:
            out[-1].append(ln)
    return ["\n".join(s) for s in out if any(x.strip() for x in s)]


def dockerfile(bp: Blueprint, tag: str) -> str:
    lines = [f"FROM {tag}"]
    lines += [f"RUN {step}" for step in bp.prelude]
    lines.append("RUN mkdir -p /app /logs/verifier")
    if bp.files:
        lines.append("COPY files/ /")
    if bp.executables:
        lines.append("RUN chmod 0755 " + " ".join(shlex.quote(p) for p in bp.executables))
    lines += [f"RUN {step}" for step in bp.setup]
    lines.append(f"WORKDIR {bp.workdir}")
    return "\n".join(lines) + "\n"


def implement(d: TaskDraft) -> TerminalTask:
    fam = get_family(d.family)
    try:
        bp = fam.implement(d.params)
    except Exception as exc:  # a family bug fails this draft at the implement gate
        raise ImplementError(f"{d.family}: cannot implement: {type(exc).__name__}: {exc}") from exc
    return from_blueprint(d, bp, tag=base_tag(bp.image))


def from_blueprint(d: TaskDraft, bp: Blueprint, *, tag: str) -> TerminalTask:
    fam = get_family(d.family)
    for path in bp.files:
        if not path.startswith("/") or ".." in path.split("/"):
            raise ImplementError(f"{d.family}: file path {path!r} must be absolute")
    # A Dockerfile instruction is one line, so a multi-line step travels base64-encoded.
    setup = tuple(s if "\n" not in s else
                  f"echo {base64.b64encode(s.encode()).decode()} | base64 -d | bash -e"
                  for s in bp.setup)
    bp = bp.model_copy(update={"setup": setup})
    mutants = {name: script(steps) for name, steps in bp.mutants.items()}
    solution = script(bp.solution)
    same = [name for name, body in mutants.items() if body == solution]
    if same:  # a mutant that is the oracle would fail the mutation gate for no reason
        raise ImplementError(f"{d.family}: mutant(s) {same} equal the oracle")
    return TerminalTask(
        task_id=d.task_id,
        instruction=d.instruction,
        dockerfile=dockerfile(bp, tag),
        files={"files" + path: content for path, content in sorted(bp.files.items())},
        solution=solution,
        tests={"test.sh": TEST_SH, "test_outputs.py": CHECK_PREAMBLE + bp.check.strip() + "\n"
               + RUNNER},
        family=d.family,
        category=d.category,
        difficulty=d.difficulty,
        tags=[d.category, d.family, f"seed:{d.seed}", f"drafter:{d.drafter}",
              f"image:{bp.image}"] + ([f"language:{fam.language}"] if fam.language else []),
        agent_timeout_sec=600.0,
        verifier_timeout_sec=120.0,
        network=False,
        mutants=mutants,
        fingerprint=d.fingerprint,
    )
