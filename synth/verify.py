"""Stage 3, verify: a task survives only if every gate passes, each in fresh containers.

Gates, in order (the first failure is recorded, typed, and ends the checks):
  duplicate  a near duplicate (same parameter fingerprint or normalized instruction) of a
             task already kept is dropped;
  hermetic   tests and Dockerfile may not install or fetch anything (static), and every
             test run happens with the network off; an oracle failure whose output shows a
             network error is attributed here too (dynamic);
  build      the image builds (content-addressed: a rebuild is a cache hit);
  isolation  neither /tests nor /solution exists in the untouched container;
  nop        the tests fail on the untouched environment;
  oracle     solve.sh passes in `oracle_runs` (>= 3) fresh containers;
  mutants    every broken solution (at least two) is rejected.

Agent and test phases are separate: the solution runs first (as an agent would), is then
removed, /tests and /logs/verifier are emptied, and only then are the tests copied in and
run; the reward is read from /logs/verifier/reward.txt (or reward.json).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from envs import images
from envs.images import ImageBuildError
from envs.models import FailureKind, Limits, TerminalTask, VerificationRun
from envs.sandbox import Sandbox, SandboxError
from envs.verify import DETERMINISM_ENV, verify_terminal, workdir_of
from synth.implement import steps_of
from synth.spec import Gate, GateRun, TaskOutcome, instruction_key

ORACLE_RUNS = 3
MIN_MUTANTS = 2
LIMITS = Limits(memory="1g", pids=256, cpus=1.0, timeout=300.0, output_bytes=256 * 1024)
SOLVE_TIMEOUT_CAP = 300.0  # seconds an oracle or mutant may run during verification

# Static hermeticity: grading must need nothing from outside the image.
_NETWORK_PATTERNS = [re.compile(p) for p in (
    r"\bapt(-get)?\s+(-\S+\s+)*(install|update)\b", r"\bpip3?\s+install\b",
    r"\buv\s+(pip|add|sync|venv|tool)\b", r"\bnpm\s+(install|i|ci)\b", r"\byarn\s+add\b",
    r"\bgem\s+install\b", r"\bcomposer\s+(install|require)\b", r"\bgo\s+(get|install)\b",
    r"\bcurl\s", r"\bwget\s", r"\burllib\.request\b", r"\brequests\.(get|post)\b",
    r"\bsocket\.create_connection\b", r"\bhttps?://",
)]
_NETWORK_ERRORS = re.compile(
    r"Could not resolve host|Temporary failure in name resolution|Network is unreachable|"
    r"Name or service not known|urlopen error|Failed to establish a new connection|"
    r"getaddrinfo|Connection refused|No address associated", re.I)


@dataclass(frozen=True)
class Trial:
    reward: float | None
    detail: str
    output: str


class DedupIndex:
    """Fingerprints and normalized instructions of the tasks kept so far (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_key: dict[str, str] = {}

    @staticmethod
    def keys(task: TerminalTask) -> list[str]:
        # Same content (parameter fingerprint), or the same environment told in the same
        # words up to case, punctuation and spacing: either makes a near duplicate.
        env = hashlib.sha256(json.dumps([task.dockerfile, task.files], sort_keys=True)
                             .encode()).hexdigest()[:16]
        keys = [f"ins:{instruction_key(task.instruction)}:{env}"]
        if task.fingerprint:
            keys.append(f"fp:{task.fingerprint}")
        return keys

    def claim(self, task: TerminalTask) -> str | None:
        """Claim the task's keys; the id of the task it duplicates, else None."""
        with self._lock:
            for k in self.keys(task):
                other = self._by_key.get(k)
                if other is not None and other != task.task_id:
                    return other
            for k in self.keys(task):
                self._by_key[k] = task.task_id
            return None

    def release(self, task: TerminalTask) -> None:
        with self._lock:
            for k in self.keys(task):
                if self._by_key.get(k) == task.task_id:
                    del self._by_key[k]


def hermetic_problems(task: TerminalTask) -> list[str]:
    found = []
    sources = {f"tests/{k}": v for k, v in task.tests.items()}
    sources["test_command"] = task.test_command
    sources["Dockerfile"] = task.dockerfile
    for name, text in sources.items():
        for pat in _NETWORK_PATTERNS:
            m = pat.search(text)
            if m:
                found.append(f"{name}: {m.group(0).strip()!r}")
    return found


def generic_mutants(solution: str) -> dict[str, str]:
    """Broken solutions derived from the oracle's steps: the last step dropped, first half."""
    steps = steps_of(solution)
    out: dict[str, str] = {}
    if len(steps) >= 2:
        out["drop-last-step"] = "#!/bin/bash\n" + "\n".join(steps[:-1]) + "\n"
    if len(steps) >= 4:
        out["first-half"] = "#!/bin/bash\n" + "\n".join(steps[: len(steps) // 2]) + "\n"
    lines = [ln for ln in solution.splitlines() if ln.strip() and not ln.startswith("#")]
    if not out and len(lines) >= 2 and "<<" not in solution:
        out["drop-last-line"] = "#!/bin/bash\n" + "\n".join(lines[:-1]) + "\n"
    return out


def trial(task: TerminalTask, image: str, solution: str | None, *,
          check_isolation: bool = False) -> Trial:
    """One fresh container: the agent phase (`solution`, or nothing), then the tests."""
    with Sandbox.start(image, network=False, limits=LIMITS, workdir=workdir_of(task.dockerfile),
                       env=DETERMINISM_ENV, labels={"envfactory.synth": task.task_id}) as sb:
        if check_isolation:
            r = sb.exec("for p in /tests /solution; do [ -e $p ] && echo $p; done; true")
            if r.stdout.strip():
                return Trial(None, f"visible before grading: {r.stdout.split()}", r.output)
        if solution is not None:
            sb.put_file("/solution/solve.sh", solution, mode=0o755)
            timeout = min(task.agent_timeout_sec, SOLVE_TIMEOUT_CAP)
            sb.exec("bash /solution/solve.sh >/tmp/.solve.log 2>&1", timeout=timeout)
            sb.exec("rm -rf /solution")
        # The one verifier, as an RL episode grades the same task.
        v = verify_terminal(sb, task)
        detail = ("timed out" if v.failure is FailureKind.TIMEOUT else f"exit {v.exit_code}") \
            + ("" if v.reward is not None else f", {v.reason}")
        return Trial(v.reward, detail, v.log_tail)


def _failure_line(text: str) -> str:
    """The first failed check our runner printed (`test_x: Error: why`), else the last line."""
    for ln in text.splitlines():
        if re.match(r"test_\w+: \w+", ln):
            return ln[:200]
    return _last_line(text)


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""


Log = Callable[[str], None]


def verify(task: TerminalTask, *, dedup: DedupIndex | None = None, oracle_runs: int = ORACLE_RUNS,
           build_name: str | None = None) -> tuple[TerminalTask, TaskOutcome]:
    """Run every gate; returns the task (image and verification record set) and the outcome."""
    started = time.monotonic()
    runs: list[GateRun] = []
    records: list[VerificationRun] = []

    def record(gate: Gate, passed: bool, detail: str = "", reward: float | None = None,
               label: str | None = None, t0: float | None = None) -> None:
        runs.append(GateRun(gate=gate, passed=passed, detail=detail,
                            seconds=round(time.monotonic() - (t0 or started), 3)))
        records.append(VerificationRun(gate=label or gate.value, passed=passed, reward=reward,
                                       detail=detail))

    def done(failed: Gate | None, detail: str = "", image: str | None = None
             ) -> tuple[TerminalTask, TaskOutcome]:
        if failed is not None and dedup is not None and failed != Gate.DUPLICATE:
            dedup.release(task)
        out_task = task.model_copy(update={"verification": records, "image": image})
        return out_task, TaskOutcome(
            task_id=task.task_id, family=task.family, category=task.category,
            failed_gate=failed, detail=detail, runs=runs,
            seconds=round(time.monotonic() - started, 2))

    # duplicate
    if dedup is not None:
        other = dedup.claim(task)
        if other is not None:
            record(Gate.DUPLICATE, False, f"near duplicate of {other}")
            return done(Gate.DUPLICATE, f"near duplicate of {other}")
        record(Gate.DUPLICATE, True)
    # hermetic (static)
    problems = hermetic_problems(task)
    if problems:
        detail = "needs the network or installs at grading: " + "; ".join(problems[:3])
        record(Gate.HERMETIC, False, detail)
        return done(Gate.HERMETIC, detail)
    record(Gate.HERMETIC, True, "static: no installs or fetches; tests run offline")
    mutants = dict(task.mutants) or generic_mutants(task.solution)
    if len(mutants) < MIN_MUTANTS:
        mutants.update({k: v for k, v in generic_mutants(task.solution).items()
                        if v not in mutants.values()})
    # build
    t0 = time.monotonic()
    try:
        image = images.build_context(build_name or f"synth-{task.family or 'task'}",
                                     task.dockerfile, {k: v.encode() for k, v in task.files.items()},
                                     kind="task", labels={"envfactory.task": task.task_id})
    except ImageBuildError as exc:
        record(Gate.BUILD, False, _last_line(str(exc)), t0=t0)
        return done(Gate.BUILD, _last_line(str(exc)))
    record(Gate.BUILD, True, image, t0=t0)
    try:
        # isolation + nop: one untouched container
        t0 = time.monotonic()
        nop = trial(task, image, None, check_isolation=True)
        if nop.reward is None and nop.detail.startswith("visible"):
            record(Gate.ISOLATION, False, nop.detail, t0=t0)
            return done(Gate.ISOLATION, nop.detail, image)
        record(Gate.ISOLATION, True, "no /tests or /solution before grading", t0=t0)
        if nop.reward is None or nop.reward > 0:
            detail = f"untouched environment got reward {nop.reward} ({nop.detail})"
            record(Gate.NOP, False, detail, nop.reward, t0=t0)
            return done(Gate.NOP, detail, image)
        record(Gate.NOP, True, nop.detail, nop.reward, t0=t0)
        # oracle, repeatedly, in fresh containers
        for i in range(max(oracle_runs, 1)):
            t0 = time.monotonic()
            o = trial(task, image, task.solution)
            label = f"oracle#{i + 1}"
            if o.reward != 1.0:
                if _NETWORK_ERRORS.search(o.output):
                    detail = f"{label}: tests need the network: {_last_line(o.output)}"
                    record(Gate.HERMETIC, False, detail, o.reward, label="hermetic", t0=t0)
                    return done(Gate.HERMETIC, detail, image)
                detail = f"{label} got reward {o.reward} ({o.detail}): {_failure_line(o.output)}"
                record(Gate.ORACLE, False, detail, o.reward, label=label, t0=t0)
                return done(Gate.ORACLE, detail, image)
            record(Gate.ORACLE, True, o.detail, o.reward, label=label, t0=t0)
        # mutants
        if len(mutants) < MIN_MUTANTS:
            detail = f"only {len(mutants)} broken solution(s) to test the tests with"
            record(Gate.MUTANTS, False, detail)
            return done(Gate.MUTANTS, detail, image)
        for name, body in sorted(mutants.items()):
            t0 = time.monotonic()
            m = trial(task, image, body)
            label = f"mutant:{name}"
            if m.reward is None or m.reward > 0:
                detail = f"tests accept the broken solution {name!r} (reward {m.reward})"
                record(Gate.MUTANTS, False, detail, m.reward, label=label, t0=t0)
                return done(Gate.MUTANTS, detail, image)
            record(Gate.MUTANTS, True, "rejected", m.reward, label=label, t0=t0)
    except SandboxError as exc:
        record(Gate.INFRA, False, str(exc)[:300])
        return done(Gate.INFRA, str(exc)[:300], image)
    return done(None, "", image)
