"""The diagnose-and-retry loop of an environment build: run a step in the build container,
and when it fails, diagnose its output (repolaunch.diagnose), snapshot, try the next action,
and roll back an action that did not help. Every attempt is recorded (`Attempt`) for the
build transcript."""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from envs.instance import SETUP_REF
from envs.sandbox import GIT, Sandbox
from repolaunch import diagnose as dx
from repolaunch.languages import Plan
from repolaunch.mine.git import test_path_pattern

Log = Callable[[str], None]
# the failure text of a build that needs a toolchain no suite here has (a typed cause upstream)
UNAVAILABLE = "toolchain unavailable"


class Attempt(BaseModel):
    model_config = ConfigDict(frozen=True)

    step: int
    phase: str  # "setup", "action", "test", "rollback"
    command: str
    exit_code: int
    output_tail: str
    seconds: float
    note: str = ""


def _tail(text: str, n: int = 2000) -> str:
    return text[-n:]


def rebuild_unless_only_tests_changed(step: str) -> str:
    """Shell: `step` (a build the tests read), skipped when nothing but test files changed
    since the image was made (`SETUP_REF`): the image holds that build already, and a test
    patch alone does not change it. Anything else (a patch to the code, no record, git not
    answering) builds."""
    git = GIT
    rx = shlex.quote(test_path_pattern())
    return (f"ch=$({git} diff --name-only {SETUP_REF} 2>/dev/null && {git} ls-files --others "
            f"--exclude-standard 2>/dev/null) || ch=.; "
            f'if [ -z "$(printf \'%s\\n\' "$ch" | grep -Pv {rx} | grep .)" ]; then '
            "echo 'envfactory: only tests changed since the build; not built again' >&2; "
            f"else {step}; fi")


class Builder:
    def __init__(self, name: str, root: Path, plan: Plan, suite: str | None, max_steps: int,
                 log: Log) -> None:
        self.name, self.root, self.plan, self.suite = name, root, plan, suite
        self.max_steps, self.log = max_steps, log
        self.transcript: list[Attempt] = []
        self.tried: set[str] = set()
        self.extra_setup: list[str] = []
        self.replaced: dict[str, str] = {}  # failed setup step -> the step that stood in
        self.actions_used = 0
        self.last_output = ""  # the whole output of the last command run

    def record(self, phase: str, command: str, exit_code: int, output: str, seconds: float,
               note: str = "") -> None:
        self.transcript.append(Attempt(step=len(self.transcript) + 1, phase=phase,
                                       command=command, exit_code=exit_code,
                                       output_tail=_tail(output), seconds=round(seconds, 2),
                                       note=note))

    def run(self, sb: Sandbox, phase: str, command: str, note: str = "") -> Any:
        t = time.monotonic()
        res = sb.exec(command, env=self.plan.env)
        self.record(phase, command, res.exit_code, res.output, time.monotonic() - t, note)
        self.last_output = res.output
        return res

    def keep(self, action: dx.Action, at: int | None = None) -> None:
        """An action that helped stays in the environment's setup. A "build" action (the
        tests read what it writes) also runs before every test run, so a patch is built."""
        self.extra_setup.insert(len(self.extra_setup) if at is None else at, action.value)
        if action.kind == "build":
            self.build_first(action.value)

    def build_first(self, step: str) -> None:
        """Every test run of the plan builds first (`step`), unless only tests changed."""
        first = f"{{ {rebuild_unless_only_tests_changed(step)}; }} && "
        p = self.plan
        self.plan = p.model_copy(update={
            k: first + getattr(p, k) for k in ("test_command", "per_test_command",
                                               "scope_command") if getattr(p, k)})

    def fix(self, sb: Sandbox, output: str, phase: str, retry: Callable[[], bool],
            step: str = "", depth: int = 0) -> str | None:
        """Try actions until `retry` succeeds. Returns None when fixed, else the reason.
        A suite change cannot happen in place; it is returned as 'suite:<name>'. A
        'replace' action stands in for the failed step itself.

        An action that runs but leaves the step failing on something else (the compiler it
        lacked now shows what it cannot compile; the stand-in step fails another way) may
        be half of the cure: the new failure is diagnosed in turn, with the action in
        place. Only when that finds no cure is the action rolled back."""
        unavailable = ""
        for action in dx.diagnose(output, plan=self.plan, phase=phase, tried=self.tried,
                                  step=step):
            if action.key in self.tried:  # tried meanwhile, in a nested diagnosis
                continue
            if self.actions_used >= self.max_steps:
                return f"gave up after {self.max_steps} diagnose steps"
            self.tried.add(action.key)
            if action.kind == "unavailable":
                unavailable = unavailable or action.reason  # said only if nothing else fixes it
                continue
            self.actions_used += 1
            self.log(f"  diagnose: {action.reason} -> {action.kind} {action.value}")
            if action.kind == "suite":
                return f"suite:{action.value}"
            if action.kind == "network_at_test":
                self.plan = self.plan.model_copy(update={"network_at_test": True})
                self.record("action", "network_at_test=on", 0, "", 0.0, action.reason)
                if retry():
                    return None
                continue
            snap = sb.snapshot()
            res = self.run(sb, "action", action.value, action.reason)
            if action.kind == "replace" and res.exit_code == 0:
                self.replaced[step] = action.value
                return None
            if action.kind != "replace" and res.exit_code == 0 and retry():
                if action.kind in ("shell", "setup", "build"):
                    self.keep(action)
                return None
            if action.kind in ("setup", "build") and res.exit_code != 0 and depth < 2:
                # The new step fails on its own (a build step with no `make` here): what it
                # lacks is diagnosed in turn, and it stays once it and the retry pass.
                at = len(self.extra_setup)
                why = self.fix(sb, self.last_output, "setup",
                               lambda v=action.value: self.run(sb, "action", v, "retry")
                               .exit_code == 0 and retry(), step=action.value, depth=depth + 1)
                if why is None:
                    self.keep(action)
                    return None
                if why.startswith("suite:"):
                    return why
                del self.extra_setup[at:]
            half = action.kind == "replace" or (action.kind in ("shell", "setup", "build")
                                                and res.exit_code == 0)
            if half and depth < 2:
                replaced, at = dict(self.replaced), len(self.extra_setup)
                now = step
                if action.kind == "replace":
                    self.replaced[step] = now = action.value  # what a retry runs now
                why = self.fix(sb, self.last_output, phase, retry, step=now, depth=depth + 1)
                if why is None or why.startswith("suite:"):
                    if why is None and action.kind != "replace":
                        self.keep(action, at)
                    return why
                self.replaced = replaced
            sb.restore(snap)  # the action did not help: undo it
            self.record("rollback", f"restore before: {action.value}", 0, "", 0.0)
        if unavailable:
            return f"{UNAVAILABLE}: {unavailable}"
        return dx.signature(output)
