"""Running a command in a sandbox: `exec`, with a wall-clock limit on both sides and
capped output.

The command runs under GNU `timeout` in the container, and a host deadline kills what
is left. Output is read as it comes (`stream.ExecStream`), kept per stream up to a cap
(head and tail), decoded with replacement; OOM kills, timeouts and a container that died
under the command are told apart.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from docker.errors import APIError, DockerException, NotFound
from docker.utils.socket import STDOUT

from envs.models import ExecResult
from envs.sandbox.errors import SandboxError, is_not_running, short
from envs.sandbox.processes import TOKEN_ENV, ProcessOps
from envs.sandbox.stream import Capped, ExecStream

KILL_AFTER_S = 2.0  # `timeout -k`: SIGKILL this long after SIGTERM
HOST_GRACE_S = 1.5  # host deadline = T + KILL_AFTER_S + HOST_GRACE_S
DRAIN_IDLE_S = 0.5  # after the process exited, stop reading once the stream is idle this long
DRAIN_MAX_S = 2.0  # ... or this long after it exited, whatever orphans still write
PATCH_TIMEOUT_S = 300.0  # our own scripts (patch, diff, snapshot, restore)


class ExecOps(ProcessOps):
    """`exec` and `_sh`, the helper the other parts run their scripts with."""

    # Dropped (None) for good once an image turns out to have no `timeout`.
    _timeout_argv: tuple[str, ...] | None = ("timeout", "-k", f"{KILL_AFTER_S:g}")

    def exec(self, cmd: str | Sequence[str], *, timeout: float | None = None,
             env: Mapping[str, str] | None = None, workdir: str | None = None,
             user: str | None = None, max_output: int | None = None) -> ExecResult:
        """Run a command (a string goes through `sh -c`) and wait for it, at most `timeout`
        seconds (default: the sandbox's Limits.timeout). Output is capped per stream at
        `max_output` bytes (default Limits.output_bytes), keeping head and tail."""
        self._check_open()
        argv = ["sh", "-c", cmd] if isinstance(cmd, str) else [str(a) for a in cmd]
        if not argv:
            raise SandboxError("empty command")
        limit = float(timeout if timeout is not None else self.limits.timeout)
        if limit <= 0:
            raise SandboxError(f"timeout must be positive, got {limit}")
        cap = max_output if max_output is not None else self.limits.output_bytes
        result = self._exec_once(argv, limit, env, workdir, user, cap)
        if result is None:  # the image has no `timeout`; the host deadline alone enforces it
            self._timeout_argv = None
            result = self._exec_once(argv, limit, env, workdir, user, cap)
            assert result is not None
        return result

    def _sh(self, script: str, what: str, *, timeout: float = PATCH_TIMEOUT_S,
            workdir: str | None = None, max_output: int | None = None) -> ExecResult:
        res = self.exec(script, timeout=timeout, workdir=workdir, max_output=max_output)
        if res.timed_out:
            raise SandboxError(f"{what} timed out after {timeout:g}s")
        return res

    def _create_exec(self, full: list[str], env: dict[str, str], workdir: str | None,
                     user: str | None) -> str:
        api = self._client.api
        for attempt in range(2):
            try:
                return str(api.exec_create(self.id, full, stdout=True, stderr=True,
                                           stdin=False, tty=False, environment=env,
                                           workdir=workdir or self.workdir,
                                           user=user or "")["Id"])
            except NotFound as exc:
                raise self._died("before exec") from exc
            except APIError as exc:
                # A freeze the engine finished after kill_all gave up on it: thaw, once.
                if attempt == 0 and "is paused" in short(exc) and self._thaw(settle=0.0):
                    continue
                if is_not_running(exc):
                    raise self._died("before exec") from exc
                raise SandboxError(f"exec failed to start: {short(exc)}") from exc
            except (DockerException, OSError) as exc:
                raise SandboxError(f"exec failed to start: {short(exc)}") from exc
        raise AssertionError("unreachable: the second attempt returns or raises")

    def _attach(self, exec_id: str) -> ExecStream:
        try:
            return ExecStream(self._client.api.exec_start(exec_id, socket=True))
        except APIError as exc:
            if is_not_running(exc):
                raise self._died("before exec") from exc
            raise SandboxError(f"exec failed to start: {short(exc)}") from exc
        except (DockerException, OSError) as exc:
            raise SandboxError(f"exec failed to start: {short(exc)}") from exc

    def _exec_once(self, argv: list[str], limit: float, env: Mapping[str, str] | None,
                   workdir: str | None, user: str | None, cap: int) -> ExecResult | None:
        """One run of the command; None if the `timeout` wrapper itself is missing."""
        wrapper = self._timeout_argv
        full = [*wrapper, f"{limit:g}", *argv] if wrapper else argv
        token = uuid.uuid4().hex
        exec_id = self._create_exec(full, {**(env or {}), TOKEN_ENV: token}, workdir, user)
        out, err = Capped(cap), Capped(cap)
        started = time.monotonic()
        host_deadline = started + limit + (KILL_AFTER_S + HOST_GRACE_S if wrapper else 0.0)
        stream = self._attach(exec_id)

        info: dict[str, Any] = {}
        hit_deadline = False
        eof = False
        exited_at: float | None = None
        last_data = started
        poll_every = 0.02
        next_poll = started + poll_every
        try:
            while True:
                now = time.monotonic()
                if now >= host_deadline:
                    hit_deadline = True
                    break
                # Idle counts from the exit or the last data, whichever is later: under load
                # the output can arrive well after the engine reports the exit.
                if exited_at is not None and (eof or now - max(last_data, exited_at)
                                              >= DRAIN_IDLE_S or now - exited_at >= DRAIN_MAX_S):
                    break
                wait = max(0.0, min(next_poll, host_deadline) - now)
                if not eof:
                    data = stream.read(wait)
                    if data is None:
                        eof = True
                        next_poll = time.monotonic()  # the process most likely just ended
                    elif data:
                        for kind, payload in stream.frames(data):
                            (out if kind == STDOUT else err).feed(payload)
                        last_data = time.monotonic()
                else:
                    time.sleep(wait)
                now = time.monotonic()
                if now >= next_poll:
                    info = self._inspect_exec(exec_id)
                    if info.get("Running"):
                        if eof and not self.alive():
                            raise self._died("during exec")
                    elif info.get("ExitCode") is not None:
                        exited_at = exited_at or now
                    elif not self.alive():
                        raise self._died("during exec")
                    # else: not started yet (the engine can hold an exec back for seconds)
                    # Back off: quick answers for short commands, cheap polling for long ones.
                    poll_every = min(poll_every * 1.5, 0.5)
                    next_poll = now + poll_every
        except BaseException:
            stream.close()
            raise
        if eof or hit_deadline:
            stream.close()
        else:
            state = self._state
            stream.drain_in_background(lambda: state.closed)

        if hit_deadline or not info:
            info = self._inspect_exec(exec_id)
        if hit_deadline and info.get("Running"):
            self._kill_marked(f"{TOKEN_ENV}={token}", info.get("Pid"))
            end = time.monotonic() + 2.0
            while info.get("Running") and time.monotonic() < end:
                time.sleep(0.05)
                info = self._inspect_exec(exec_id)
        duration = time.monotonic() - started
        code = info.get("ExitCode")
        exit_code = int(code) if code is not None else (137 if hit_deadline else -1)

        if wrapper and exit_code in (126, 127) and duration < limit:
            text = out.text() + err.text()
            if "executable file not found" in text and '"timeout"' in text:
                return None
        if (code is None or exit_code >= 126) and not self.alive():
            raise self._died("during exec")
        timed_out = hit_deadline or (exit_code in (124, 137) and duration >= limit)
        if timed_out:
            # Whatever the command left behind (setsid'd, reparented children) dies with it.
            self._kill_marked(f"{TOKEN_ENV}={token}", info.get("Pid"))
        oom = exit_code in (137, -9) and self._oom_increased()
        if exit_code in (137, -1) and not oom and not timed_out and self._container_dead():
            # SIGKILLed with the container: the engine may not have noticed it yet.
            raise self._died("during exec")
        return ExecResult(exit_code=exit_code, stdout=out.text(), stderr=err.text(),
                          duration=duration, timed_out=timed_out, oom_killed=oom,
                          stdout_truncated=out.truncated, stderr_truncated=err.truncated)

    def _inspect_exec(self, exec_id: str) -> dict[str, Any]:
        try:
            return dict(self._client.api.exec_inspect(exec_id))
        except NotFound as exc:
            raise self._died("during exec") from exc
        except (DockerException, OSError) as exc:
            raise SandboxError(f"cannot inspect exec: {short(exc)}") from exc
