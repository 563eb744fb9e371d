"""What differs between an episode of a SWE task and one of a terminal task: the recipe of
its sandbox, its prompt, how it is verified and graded, its reference solution and the
fingerprint of its files. Grading itself is `envs.verify`'s; the episode (`envs.episode`)
calls these parts through `kind_for(task)`, in the pool's executor (all but `prompt` block).
"""

from __future__ import annotations

import re
import shlex
from typing import Literal, Union

from envs.models import FailureKind, SWETask, TerminalTask
from envs.pool import Recipe, ResetMode
from envs.sandbox import GIT as _GIT
from envs.sandbox import Sandbox, SandboxError
from envs.verify import (
    DETERMINISM_ENV,
    VerifyResult,
    agent_diff,
    failed,
    grading_diff,
    last_line,
    verify_swe,
    verify_terminal,
    workdir_of,
)

__all__ = ["EpisodeError", "Kind", "SWEKind", "Task", "TerminalKind", "kind_for", "prompt_of",
           "task_id_of"]

Task = Union[SWETask, TerminalTask]


class EpisodeError(SandboxError):
    """The episode cannot go on (no reset yet, already over, the environment is missing)."""

    def __init__(self, message: str, failure: FailureKind = FailureKind.NONE) -> None:
        super().__init__(message)
        self.failure = failure


def task_id_of(task: Task) -> str:
    return task.instance_id if isinstance(task, SWETask) else task.task_id


class Kind:
    """What differs between SWE and terminal tasks; all methods but prompt() block."""

    kind: Literal["swe", "terminal"]
    default_mode: ResetMode
    verify_timeout: float
    agent_timeout: float | None = None

    def recipe(self, mode: ResetMode) -> Recipe:
        raise NotImplementedError

    def prompt(self) -> str:
        raise NotImplementedError

    def verify(self, sb: Sandbox, timeout: float, mutated: bool,
               command: str | None) -> VerifyResult:
        raise NotImplementedError

    # Kinds that grade in a fresh sandbox: the agent's changes, read in its own sandbox...
    grades_fresh = False

    def changes(self, sb: Sandbox) -> str:
        raise NotImplementedError

    # ...then carried into a clean one of the same image, and graded there.
    def grade(self, sb: Sandbox, changes: str, timeout: float,
              command: str | None) -> VerifyResult:
        raise NotImplementedError

    def solve(self, sb: Sandbox) -> None:
        """Apply the reference solution (for check_env)."""
        raise NotImplementedError

    def fingerprint(self, sb: Sandbox) -> str:
        raise NotImplementedError


class SWEKind(Kind):
    kind = "swe"
    default_mode = ResetMode.RESTORE

    def __init__(self, task: SWETask) -> None:
        if task.env_spec is None or not task.env_spec.image:
            raise EpisodeError(f"task {task.instance_id} has no built environment image",
                               FailureKind.ENV_COLLAPSE)
        self.task, self.spec = task, task.env_spec
        self.verify_timeout = self.spec.limits.timeout
        self.commit = self.spec.checkout or task.base_commit

    def recipe(self, mode: ResetMode) -> Recipe:
        from envs.instance import checkout_script

        return Recipe.make(
            self.spec.image or "", workdir=self.spec.workdir, network=self.spec.network,
            limits=self.spec.limits, env={**DETERMINISM_ENV, **self.spec.env},
            labels={"envfactory.instance": self.task.instance_id[:60]},
            setup=checkout_script(self.spec.checkout) if self.spec.checkout else "",
            reset_mode=mode, restore_commit=self.commit)

    def prompt(self) -> str:
        t = self.task
        text = f"Repository {t.repo}, checked out at {self.spec.workdir}.\n\n{t.problem_statement}"
        if t.hints_text.strip():
            text += f"\n\nHints:\n{t.hints_text}"
        return text

    def verify(self, sb: Sandbox, timeout: float, mutated: bool,
               command: str | None) -> VerifyResult:
        sb.kill_all()  # the agent's background processes do not run beside the tests
        return verify_swe(sb, self.task, self.spec, commit=self.commit, changed=mutated,
                          timeout=timeout, command=command)

    grades_fresh = True

    def changes(self, sb: Sandbox) -> str:
        sb.kill_all()  # nothing of the agent's keeps writing while its changes are read
        return agent_diff(sb, self.commit, self.spec.workdir)

    def grade(self, sb: Sandbox, changes: str, timeout: float,
              command: str | None) -> VerifyResult:
        """SWE-bench's way: the agent's code changes (test and test-harness files left out)
        applied to a clean checkout, the hidden tests run there. Whatever the agent did to
        its own container (daemons, PATH shims, caches, /tmp, the git history) is not here."""
        graded, dropped = grading_diff(changes, self.task)
        changed = bool(graded.strip())
        if changed:
            res = sb.apply_patch(graded)
            if not res.applied:
                return failed(FailureKind.MODEL, "the agent's changes do not apply to a clean "
                              f"checkout: {res.reason}")
        verdict = verify_swe(sb, self.task, self.spec, commit=self.commit, changed=changed,
                             timeout=timeout, command=command)
        if dropped:
            note = f"; not graded (tests and test harness): {', '.join(dropped[:5])}"
            verdict = verdict.model_copy(update={"reason": verdict.reason + note})
        return verdict

    def solve(self, sb: Sandbox) -> None:
        res = sb.apply_patch(self.task.patch)
        if not res.applied:
            raise SandboxError(f"the reference patch did not apply: {res.reason}")

    def fingerprint(self, sb: Sandbox) -> str:
        res = sb.exec(f"{_GIT} rev-parse HEAD; {_GIT} status --porcelain --untracked-files=all;"
                      f" {_GIT} diff HEAD | sha256sum", timeout=60)
        return res.stdout


class TerminalKind(Kind):
    kind = "terminal"
    default_mode = ResetMode.RECREATE

    def __init__(self, task: TerminalTask) -> None:
        self.task = task
        self.verify_timeout = task.verifier_timeout_sec
        self.agent_timeout = task.agent_timeout_sec
        self.workdir = workdir_of(task.dockerfile)
        self._image = task.image

    def image(self) -> str:
        if self._image is None:
            from envs import images

            name = "task-" + re.sub(r"[^a-z0-9._-]+", "-", self.task.task_id.lower())[:60]
            files = {p: t.encode() for p, t in self.task.files.items()}
            try:
                self._image = images.build_context(name, self.task.dockerfile, files,
                                                   kind="task", log=lambda _m: None)
            except images.ImageBuildError as exc:
                raise EpisodeError(str(exc), FailureKind.BUILD_FAILED) from exc
        return self._image

    def recipe(self, mode: ResetMode) -> Recipe:
        return Recipe.make(self.image(), workdir=self.workdir, network=self.task.network,
                           env=DETERMINISM_ENV,
                           labels={"envfactory.task": self.task.task_id[:60]}, reset_mode=mode)

    def prompt(self) -> str:
        return self.task.instruction

    def verify(self, sb: Sandbox, timeout: float, mutated: bool,
               command: str | None) -> VerifyResult:
        # No kill_all here (unlike SWE): a terminal task may be "start this service", and
        # its tests then talk to what the agent left running.
        return verify_terminal(sb, self.task, timeout=timeout, command=command)

    def solve(self, sb: Sandbox) -> None:
        sb.put_file("/solution/solve.sh", self.task.solution, mode=0o755)
        res = sb.exec("bash /solution/solve.sh", timeout=self.task.agent_timeout_sec)
        if res.exit_code != 0:
            raise SandboxError(f"the reference solution failed (exit {res.exit_code}): "
                               f"{last_line(res.output)}")

    def fingerprint(self, sb: Sandbox) -> str:
        wd = shlex.quote(self.workdir)
        prune = "\\( -path /proc -o -path /sys -o -path /dev -o -path /tmp \\) -prune -o"
        res = sb.exec(f"find {wd} -xdev -maxdepth 4 {prune} -type f -print 2>/dev/null | "
                      "LC_ALL=C sort | head -n 5000 | xargs -r -d '\\n' sha256sum 2>/dev/null",
                      timeout=120, max_output=8 << 20)
        return res.stdout


def kind_for(task: Task) -> Kind:
    return SWEKind(task) if isinstance(task, SWETask) else TerminalKind(task)


def prompt_of(task: Task) -> str:
    """The user prompt an episode of this task starts with (reset's observation)."""
    return kind_for(task).prompt()
