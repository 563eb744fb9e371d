"""The hardened Docker sandbox every flow runs untrusted code in.

A `Sandbox` is one long-lived container (`docker-init` + `sleep infinity`) started with
no network, all capabilities dropped, no new privileges, pids / memory (no swap) / CPU
limits, and labels that say who owns it. Commands run in it through `exec`, which adds
a wall-clock timeout on both sides (GNU `timeout` in the container, a host deadline that
kills what is left), caps the output it keeps (head + tail of each stream), decodes it
with replacement and tells OOM kills and timeouts apart.

Files go in and out through the engine's archive API (`put_file`, `put_dir`,
`get_file`); patches are applied with `git apply`, falling back to a fuzzy `patch`
(`apply_patch`); `diff` shows what changed, untracked files included, without touching
the repository's index; `snapshot` / `restore` save and roll back either the whole
container (an image) or a few paths (a tar inside the container).

`kill_all` ends every process the execs left behind (servers, fork bombs) and keeps
the sandbox usable. Leftovers of crashed processes are found by label and removed by
`gc()`; a sandbox that is neither closed nor collected is removed at interpreter exit.

Engine quirk (dockerd 20.10, also seen with the docker CLI): after an exec whose
background children keep its stdout open (`server &`), the engine holds back the *next*
exec for about 3.5 s. Redirect such children (`server >/dev/null 2>&1 &`) to avoid it.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import posixpath
import re
import select
import shlex
import socket
import struct
import tarfile
import threading
import time
import uuid
import weakref
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docker.errors import APIError, DockerException, ImageNotFound, NotFound

from envs import engine
from envs.config import get_settings
from envs.hostprocs import host_kill, in_container, proc_stat, proc_state, start_time
from envs.models import ExecResult, Limits

__all__ = [
    "LABEL",
    "PatchResult",
    "Sandbox",
    "SandboxDied",
    "SandboxError",
    "Snapshot",
    "gc",
]

log = logging.getLogger(__name__)

LABEL = "envfactory.sandbox"
OWNER_LABEL = "envfactory.owner"
CREATED_LABEL = "envfactory.created"
KIND_LABEL = "envfactory.kind"  # "container" or "snapshot"
SNAPSHOT_OF_LABEL = "envfactory.snapshot-of"  # on snapshot images: the container they came from

KILL_AFTER_S = 2.0  # `timeout -k`: SIGKILL this long after SIGTERM
HOST_GRACE_S = 1.5  # host deadline = T + KILL_AFTER_S + HOST_GRACE_S
DRAIN_IDLE_S = 0.5  # after the process exited, stop reading once the stream is idle this long
DRAIN_MAX_S = 2.0  # ... or this long after it exited, whatever orphans still write
READ_CHUNK = 1 << 18
_DIFF_END = "--envfactory-diff-end--"  # Sandbox.diff's last line: its output is whole
INTERNAL_DIR = "/tmp/.envfactory"
PATCH_TIMEOUT_S = 300.0
_TOKEN_ENV = "ENVFACTORY_EXEC_TOKEN"  # marks every process of one exec, for the host-side kill
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's well-known empty tree
# git as every flow runs it in a container: the work tree's owner differs from root's, and
# paths come out as written (not octal-escaped)
GIT = "git -c safe.directory='*' -c core.quotepath=false"


class SandboxError(RuntimeError):
    """A sandbox operation failed; the message says why in one line."""


class SandboxDied(SandboxError):
    """The container is gone or stopped (killed from outside, engine restarted, OOM of init)."""


class DiffError(SandboxError):
    """git could not produce the work tree's diff, or it is over the size asked for (the
    work tree's doing, not the engine's)."""


@dataclass(frozen=True)
class PatchResult:
    applied: bool
    method: str | None  # "git apply", "patch --fuzz", "git apply --reject", "empty" or None
    reason: str
    log: str


@dataclass(frozen=True)
class Snapshot:
    kind: str  # "image" (docker commit) or "fs" (tar of paths inside the container)
    ref: str  # image id, or path of the tar inside the container
    paths: tuple[str, ...] = ()


# --------------------------------------------------------------------------- helpers


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _short(exc: BaseException) -> str:
    text = getattr(exc, "explanation", None) or str(exc)
    lines = str(text).strip().splitlines()
    return (lines[0] if lines else type(exc).__name__)[:300]


def _is_not_running(exc: APIError) -> bool:
    return exc.status_code == 409 or "is not running" in _short(exc) or "is paused" in _short(exc)


def _default_limits() -> Limits:
    s = get_settings()
    return Limits(memory=s.sandbox_memory, pids=s.sandbox_pids, cpus=s.sandbox_cpus,
                  output_bytes=s.output_bytes)


_ncpu_cache: dict[str, int] = {}


def _engine_cpus(client: Any) -> int:
    """CPUs of the engine's host, once per engine (docker rejects nano_cpus above it)."""
    key = str(getattr(client.api, "base_url", ""))
    if key not in _ncpu_cache:
        try:
            _ncpu_cache[key] = int(client.info().get("NCPU") or 0)
        except (DockerException, OSError, ValueError):
            _ncpu_cache[key] = 0
    return _ncpu_cache[key]


class _Capped:
    """Keeps the first and last `cap // 2` bytes of a stream; counts what it drops."""

    def __init__(self, cap: int) -> None:
        self.half = max(1, cap // 2)
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_len = 0
        self.total = 0

    def feed(self, data: bytes | memoryview) -> None:
        self.total += len(data)
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        if len(data) >= self.half:
            self.tail.clear()
            self.tail.append(bytes(data[-self.half:]))
            self.tail_len = self.half
            return
        self.tail.append(bytes(data))
        self.tail_len += len(data)
        # Drop whole chunks from the left while the rest still covers the last half-cap bytes.
        while self.tail and self.tail_len - len(self.tail[0]) >= self.half:
            self.tail_len -= len(self.tail.popleft())

    @property
    def truncated(self) -> bool:
        return self.total > len(self.head) + min(self.tail_len, self.half)

    def text(self) -> str:
        tail = b"".join(self.tail)[-self.half:] if self.tail else b""
        head = bytes(self.head)
        dropped = self.total - len(head) - len(tail)
        if dropped <= 0:
            return (head + tail).decode("utf-8", errors="replace")
        marker = f"\n[... envfactory: {dropped} bytes truncated ...]\n"
        return (head.decode("utf-8", errors="replace") + marker
                + tail.decode("utf-8", errors="replace"))


class _ExecStream:
    """Non-blocking reader of one hijacked `exec start` connection (docker's 8-byte frames).

    Reads go through the HTTP response's buffered reader when there is one: the header
    parser may already have buffered the first frames, which a raw socket read would lose.
    """

    def __init__(self, sock: Any) -> None:
        self._sock = sock
        self._raw = getattr(sock, "_sock", sock)  # SocketIO -> socket
        self._buffered = None
        response = getattr(sock, "_response", None)
        with contextlib.suppress(AttributeError):
            self._buffered = response.raw._fp.fp
        self._response = response
        try:
            self._raw.settimeout(0)
        except (AttributeError, OSError):
            self._buffered = None
        self._pending = bytearray()

    def _read_once(self) -> bytes | None:
        """Bytes available now (b"" if none); None when the reader cannot be read."""
        try:
            if self._buffered is not None:
                return self._buffered.read1(READ_CHUNK) or b""
            if hasattr(self._raw, "recv"):
                return self._raw.recv(READ_CHUNK)
            return os.read(self._raw.fileno(), READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return b""
        except (OSError, ValueError):
            return None

    def read(self, timeout: float) -> bytes | None:
        """Up to one chunk; b"" when nothing arrived within timeout; None at end of stream."""
        data = self._read_once()
        if data:
            return data
        if data is None:
            return None
        try:
            ready, _, _ = select.select([self._raw], [], [], max(0.0, timeout))
        except (OSError, ValueError):
            return None
        if not ready:
            return b""
        data = self._read_once()
        # Readable but empty: the peer closed the connection.
        return data if data else None

    def frames(self, data: bytes) -> list[tuple[int, bytes]]:
        """Complete frames so far as (stream, payload); a partial frame waits for more."""
        self._pending += data
        buf = self._pending
        out: list[tuple[int, bytes]] = []
        pos = 0
        while len(buf) - pos >= 8:
            (size,) = struct.unpack_from(">I", buf, pos + 4)
            if len(buf) - pos - 8 < size:
                break
            out.append((buf[pos], bytes(buf[pos + 8:pos + 8 + size])))
            pos += 8 + size
        del buf[:pos]
        return out

    def drain_in_background(self, state: _State) -> None:
        """Keep reading (and dropping) until the stream ends, then close it.

        Orphans of a finished command (`server &`) can hold the stream open. Hanging up
        on them makes the engine stall the next exec for seconds, and not reading at all
        would block them once the pipe fills; so a daemon thread drains it.
        """

        def drain() -> None:
            try:
                while not state.closed and self.read(1.0) is not None:
                    pass
            finally:
                self.close()

        threading.Thread(target=drain, name="envfactory-drain", daemon=True).start()

    def close(self) -> None:
        for thing in (self._sock, self._response):
            with contextlib.suppress(Exception):
                thing.close()  # type: ignore[union-attr]


# --------------------------------------------------------------------------- cleanup


@dataclass
class _State:
    """What the finalizer needs; deliberately holds no reference to the Sandbox."""

    client: Any
    container_id: str
    pid: int = field(default_factory=os.getpid)
    images: list[str] = field(default_factory=list)
    closed: bool = False


def _cleanup(state: _State) -> None:
    if state.closed or state.pid != os.getpid():  # a forked child does not own the sandbox
        return
    state.closed = True
    api = state.client.api
    with contextlib.suppress(NotFound):
        try:
            api.remove_container(state.container_id, force=True, v=True)
        except (DockerException, OSError) as exc:
            log.warning("could not remove sandbox container %s: %s",
                        state.container_id[:12], _short(exc))
    # Newest first: a snapshot of a restored container is a child of the older snapshot.
    for image_id in reversed(state.images):
        with contextlib.suppress(NotFound):
            try:
                api.remove_image(image_id, force=True)
            except (DockerException, OSError) as exc:
                log.warning("could not remove snapshot image %s: %s", image_id[:19], _short(exc))
    state.images.clear()


# --------------------------------------------------------------------------- the sandbox


class Sandbox:
    """One hardened container. Use `Sandbox.start(...)`, ideally as a context manager."""

    image: str
    workdir: str

    def __init__(self, client: Any, container_id: str, *, image: str, workdir: str,
                 create_kwargs: dict[str, Any], limits: Limits) -> None:
        self._client = client
        self.image = image
        self.workdir = workdir
        self._create_kwargs = create_kwargs  # kept so restore() recreates the same config
        self.limits = limits
        self._lock = threading.Lock()
        self._oom_seen = 0  # a fresh container's memory cgroup has seen no OOM kills
        self._timeout_argv: tuple[str, ...] | None = ("timeout", "-k", f"{KILL_AFTER_S:g}")
        self._snap_seq = 0
        self._visible_for = ""  # container id the _visible answer is for
        self._visible = False
        self._init_pid = 0  # host pid of the container's docker-init, when visible
        self._keepalive_pid = 0  # host pid of its `sleep infinity`, found on first kill_all
        self._state = _State(client=client, container_id=container_id)
        self._finalizer = weakref.finalize(self, _cleanup, self._state)

    # ---------------------------------------------------------------- lifecycle

    @classmethod
    def start(cls, image: str, *, network: bool = False, limits: Limits | None = None,
              workdir: str = "/", env: dict[str, str] | None = None,
              cap_add: Sequence[str] = (), labels: dict[str, str] | None = None,
              name: str | None = None) -> Sandbox:
        """Create and start a hardened container from a local image."""
        client = engine.client()
        limits = limits or _default_limits()
        cpus = limits.cpus
        ncpu = _engine_cpus(client)
        if ncpu and cpus > ncpu:
            cpus = float(ncpu)  # asking for more than the host has is an engine error
        all_labels = {**(labels or {}), LABEL: "1", OWNER_LABEL: _owner(),
                      CREATED_LABEL: str(int(time.time())), KIND_LABEL: "container"}
        host_config = client.api.create_host_config(
            network_mode="bridge" if network else "none",
            cap_drop=["ALL"],
            cap_add=list(cap_add) or None,
            security_opt=["no-new-privileges"],
            pids_limit=limits.pids,
            mem_limit=limits.memory,
            memswap_limit=limits.memory,  # equal to the memory limit: no swap
            nano_cpus=int(cpus * 1e9) if cpus > 0 else None,
            init=True,  # docker-init reaps the zombies orphaned commands leave
        )
        create_kwargs: dict[str, Any] = dict(
            command=["sleep", "infinity"],
            entrypoint=[""],  # reset the image's entrypoint: nothing else auto-starts
            environment=dict(env or {}),
            working_dir=workdir,
            labels=all_labels,
            host_config=host_config,
            name=name,
            detach=True,
            stdin_open=False,
            tty=False,
            use_config_proxy=network,
        )
        cid = cls._create(client, image, create_kwargs)
        return cls(client, cid, image=image, workdir=workdir, create_kwargs=create_kwargs,
                   limits=limits)

    @staticmethod
    def _create(client: Any, image: str, kwargs: dict[str, Any]) -> str:
        api = client.api
        try:
            cid = api.create_container(image, **kwargs)["Id"]
        except ImageNotFound as exc:
            raise SandboxError(
                f"image {image} is not present locally (no registry is assumed; build it first)"
            ) from exc
        except (DockerException, OSError) as exc:
            raise SandboxError(f"cannot create a sandbox from {image}: {_short(exc)}") from exc
        try:
            api.start(cid)
        except (DockerException, OSError) as exc:
            with contextlib.suppress(DockerException, OSError):
                api.remove_container(cid, force=True)
            raise SandboxError(f"cannot start a sandbox from {image}: {_short(exc)}") from exc
        return cid

    @property
    def id(self) -> str:
        return self._state.container_id

    @property
    def closed(self) -> bool:
        return self._state.closed

    def __repr__(self) -> str:
        return f"Sandbox({self.id[:12]}, image={self.image!r})"

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def alive(self) -> bool:
        if self.closed:
            return False
        try:
            state = self._client.api.inspect_container(self.id)["State"]
        except (DockerException, OSError):
            return False
        return bool(state.get("Running")) and not state.get("Paused")

    def close(self) -> None:
        """Remove the container and this sandbox's snapshot images. Idempotent."""
        self._finalizer()

    def _check_open(self) -> None:
        if self.closed:
            raise SandboxError(f"sandbox {self.id[:12]} is closed")

    def _died(self, during: str) -> SandboxDied:
        try:
            st = self._client.api.inspect_container(self.id)["State"]
            how = (f"status {st.get('Status')}, exit code {st.get('ExitCode')}"
                   + (", OOM-killed" if st.get("OOMKilled") else ""))
        except NotFound:
            how = "container removed"
        except (DockerException, OSError) as exc:
            how = f"engine error: {_short(exc)}"
        return SandboxDied(f"sandbox {self.id[:12]} died {during} ({how})")

    # ---------------------------------------------------------------- exec

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

    def _exec_once(self, argv: list[str], limit: float, env: Mapping[str, str] | None,
                   workdir: str | None, user: str | None, cap: int) -> ExecResult | None:
        api = self._client.api
        wrapper = self._timeout_argv
        full = [*wrapper, f"{limit:g}", *argv] if wrapper else argv
        token = uuid.uuid4().hex
        environment = {**(env or {}), _TOKEN_ENV: token}
        for attempt in range(2):
            try:
                exec_id = api.exec_create(self.id, full, stdout=True, stderr=True, stdin=False,
                                          tty=False, environment=environment,
                                          workdir=workdir or self.workdir,
                                          user=user or "")["Id"]
                break
            except NotFound as exc:
                raise self._died("before exec") from exc
            except APIError as exc:
                # A freeze the engine finished after kill_all gave up on it: thaw, once.
                if attempt == 0 and "is paused" in _short(exc) and self._thaw(settle=0.0):
                    continue
                if _is_not_running(exc):
                    raise self._died("before exec") from exc
                raise SandboxError(f"exec failed to start: {_short(exc)}") from exc
            except (DockerException, OSError) as exc:
                raise SandboxError(f"exec failed to start: {_short(exc)}") from exc

        out, err = _Capped(cap), _Capped(cap)
        started = time.monotonic()
        host_deadline = started + limit + (KILL_AFTER_S + HOST_GRACE_S if wrapper else 0.0)
        try:
            stream = _ExecStream(api.exec_start(exec_id, socket=True))
        except APIError as exc:
            if _is_not_running(exc):
                raise self._died("before exec") from exc
            raise SandboxError(f"exec failed to start: {_short(exc)}") from exc
        except (DockerException, OSError) as exc:
            raise SandboxError(f"exec failed to start: {_short(exc)}") from exc

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
                            (out if kind == 1 else err).feed(payload)
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
            stream.drain_in_background(self._state)

        if hit_deadline or not info:
            info = self._inspect_exec(exec_id)
        if hit_deadline and info.get("Running"):
            self._kill_marked(f"{_TOKEN_ENV}={token}", info.get("Pid"))
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
            self._kill_marked(f"{_TOKEN_ENV}={token}", info.get("Pid"))
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
            raise SandboxError(f"cannot inspect exec: {_short(exc)}") from exc

    def _host_visible(self) -> bool:
        """Are this container's processes visible in our /proc (a local engine, as root)?"""
        cid = self.id
        if self._visible_for != cid:
            try:
                pid = int(self._client.api.inspect_container(cid)["State"]["Pid"] or 0)
            except (DockerException, OSError, KeyError, ValueError):
                pid = 0
            self._visible = bool(pid) and in_container(pid, cid) and os.access(
                f"/proc/{pid}/environ", os.R_OK)
            self._visible_for = cid
            self._init_pid = pid
        return self._visible

    def _container_dead(self, settle_s: float = 0.5) -> bool:
        """Is the container dead or dying? The engine marks it stopped a moment after its
        processes died, so look at its init on the host, or give the engine `settle_s`."""
        if not self.alive():
            return True
        if self._host_visible():
            state = proc_state(self._init_pid)
            return state is None or state in "ZX"
        end = time.monotonic() + settle_s
        while time.monotonic() < end:
            time.sleep(0.1)
            if not self.alive():
                return True
        return False

    def _kill_marked(self, marker: str, root_pid: int | None = None) -> int:
        """SIGKILL processes carrying `marker` in their environment (and root_pid's tree).

        From the host when it sees the container's processes (no fork inside the
        container is needed, so it works under a fork bomb); otherwise with a script
        inside the container, as well as that can. Returns the count, -1 if unknown.
        """
        if self._host_visible():
            return host_kill(self.id, root_pid, marker.encode())
        self._run_internal(
            f"for d in /proc/[0-9]*; do grep -qa {shlex.quote(marker)} \"$d/environ\" "
            "2>/dev/null && kill -9 \"${d#/proc/}\" 2>/dev/null; done; true")
        return -1

    def kill_all(self) -> int:
        """Kill every process any exec started (background servers, daemons, fork bombs);
        docker-init and the keepalive stay, so the sandbox stays usable.

        The container is frozen while its processes are found and signalled, so nothing
        forks away in between. Returns how many were killed (-1 if unknown).
        """
        self._check_open()
        api = self._client.api
        marker = f"{_TOKEN_ENV}="
        if not self._host_visible():
            return self._kill_marked(marker)
        paused = False
        try:
            api.pause(self.id)
            paused = True
        except NotFound as exc:
            raise self._died("before kill_all") from exc
        except (DockerException, OSError) as exc:  # no freezer, or it did not settle
            log.debug("pause failed, killing in rounds: %s", _short(exc))
        # Everything but docker-init and the keepalive: a daemon that cleared its
        # environment (`setsid env -i`) carries no marker, and must die all the same.
        keep = self._keep_pids()
        try:
            killed = host_kill(self.id, None, marker.encode(), rounds=1 if paused else 10,
                                all_but=keep)
        finally:
            # Thaw even after a failed pause: a freeze that timed out on our side can still
            # complete in the engine a moment later, so watch a while before trusting it.
            self._thaw(settle=0.0 if paused else 0.5)
        return killed + host_kill(self.id, None, marker.encode(), all_but=keep)

    def _keep_pids(self) -> frozenset[int] | None:
        """Host pids of docker-init and the keepalive (the oldest `sleep infinity` child of
        init); None when they cannot be told apart (then only marked processes die)."""
        if not self._init_pid:
            return None
        if not self._keepalive_pid or proc_stat(self._keepalive_pid) is None:
            kids = []
            for name in os.listdir("/proc"):
                if name.isdigit():
                    st = proc_stat(int(name))
                    if st is not None and st[0] == self._init_pid:
                        kids.append(int(name))
            for pid in sorted(kids, key=start_time):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as fh:
                        if fh.read() == b"sleep\0infinity\0":
                            self._keepalive_pid = pid
                            break
                except OSError:
                    continue
            else:
                return None
        return frozenset({self._init_pid, self._keepalive_pid})

    def _thaw(self, settle: float) -> bool:
        """Unpause until the engine reports the sandbox running, watching ``settle`` more
        seconds for a late freeze. True if it ends up unpaused."""
        api = self._client.api
        deadline = time.monotonic() + 5.0
        quiet_until = time.monotonic() + settle
        while time.monotonic() < deadline:
            try:
                if api.inspect_container(self.id)["State"].get("Paused"):
                    api.unpause(self.id)
                    quiet_until = time.monotonic() + settle
                    continue
                if time.monotonic() >= quiet_until:
                    return True
            except NotFound:
                return False
            except (DockerException, OSError):
                pass
            time.sleep(0.1)
        return False

    def _oom_increased(self) -> bool:
        """Did the memory cgroup's oom_kill counter grow since we last looked?"""
        raw = self._run_internal(
            "cat /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events"
            " 2>/dev/null; true")
        m = re.search(r"^oom_kill (\d+)", raw, re.M)
        if m is None:  # no counter: fall back to the engine's flag (main process only)
            try:
                return bool(self._client.api.inspect_container(self.id)["State"]["OOMKilled"])
            except (DockerException, OSError, KeyError):
                return False
        count = int(m.group(1))
        with self._lock:
            grew = count > self._oom_seen
            self._oom_seen = max(self._oom_seen, count)
        return grew

    def _run_internal(self, script: str) -> str:
        """A quick helper command of our own, no wrapper, output only (best effort)."""
        api = self._client.api
        try:
            exec_id = api.exec_create(self.id, ["sh", "-c", script], stdout=True,
                                      stderr=True)["Id"]
            data = api.exec_start(exec_id)
        except (DockerException, OSError):
            return ""
        return data.decode("utf-8", errors="replace") if isinstance(data, bytes) else ""

    def _sh(self, script: str, what: str, *, timeout: float = PATCH_TIMEOUT_S,
            workdir: str | None = None, max_output: int | None = None) -> ExecResult:
        res = self.exec(script, timeout=timeout, workdir=workdir, max_output=max_output)
        if res.timed_out:
            raise SandboxError(f"{what} timed out after {timeout:g}s")
        return res

    # ---------------------------------------------------------------- files

    def _abs(self, path: str, base: str | None = None) -> str:
        return posixpath.normpath(posixpath.join(base or self.workdir, path))

    def put_file(self, path: str, data: bytes | str, mode: int = 0o644) -> None:
        """Write one file (parent directories are created)."""
        self._put_archive({self._abs(path): (data, mode)})

    def put_files(self, files: Mapping[str, bytes | str]) -> None:
        """Write several files in one archive upload."""
        if files:
            self._put_archive({self._abs(p): (d, 0o644) for p, d in files.items()})

    def _put_archive(self, files: Mapping[str, tuple[bytes | str, int]],
                     dirs: Mapping[str, int] | None = None) -> None:
        self._check_open()
        buf = io.BytesIO()
        now = time.time()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            for path, mode in (dirs or {}).items():
                info = tarfile.TarInfo(path.lstrip("/"))
                info.type, info.mode, info.mtime = tarfile.DIRTYPE, mode, now
                tar.addfile(info)
            for path, (data, mode) in files.items():
                payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
                # No entries for parent directories: the engine creates missing ones, and an
                # entry for an existing one (/tmp) would reset its mode.
                info = tarfile.TarInfo(path.lstrip("/"))
                info.size, info.mode, info.mtime = len(payload), mode, now
                tar.addfile(info, io.BytesIO(payload))
        self._upload(buf.getvalue())

    def _upload(self, archive: bytes) -> None:
        try:
            ok = self._client.api.put_archive(self.id, "/", archive)
        except NotFound as exc:
            raise self._died("before put") from exc
        except APIError as exc:
            if _is_not_running(exc):
                raise self._died("before put") from exc
            raise SandboxError(f"cannot write files into the sandbox: {_short(exc)}") from exc
        except (DockerException, OSError) as exc:
            raise SandboxError(f"cannot write files into the sandbox: {_short(exc)}") from exc
        if not ok:
            raise SandboxError("the engine refused the archive upload")

    def put_dir(self, local_dir: Path | str, dest: str) -> None:
        """Copy a local directory's contents to `dest` (created if missing)."""
        self._check_open()
        src = Path(local_dir)
        if not src.is_dir():
            raise SandboxError(f"{src} is not a directory")
        target = self._abs(dest).lstrip("/")

        def owned_by_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
            # Root in the sandbox has no CAP_DAC_OVERRIDE/CAP_FOWNER: files owned by the
            # host user would be read-only to it.
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            return info

        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            children = sorted(src.iterdir())
            if not children:
                info = owned_by_root(tarfile.TarInfo(target))
                info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, time.time()
                tar.addfile(info)
            for child in children:
                tar.add(str(child), arcname=posixpath.join(target, child.name),
                        filter=owned_by_root)
        self._upload(buf.getvalue())

    def get_file(self, path: str, max_bytes: int | None = None) -> bytes:
        """Read one file. FileNotFoundError if missing, SandboxError if it is a directory
        or larger than max_bytes. Symlinks are followed."""
        self._check_open()
        full = self._abs(path)
        for _ in range(8):
            try:
                stream, stat = self._client.api.get_archive(self.id, full)
            except NotFound as exc:
                if not self.alive():
                    raise self._died("before get") from exc
                raise FileNotFoundError(f"{full}: no such file in sandbox {self.id[:12]}"
                                        ) from exc
            except (DockerException, OSError) as exc:
                raise SandboxError(f"cannot read {full}: {_short(exc)}") from exc
            mode = int(stat.get("mode", 0))
            if mode & (1 << 27) and stat.get("linkTarget"):  # Go's os.ModeSymlink
                with contextlib.suppress(Exception):
                    stream.close()
                full = self._abs(stat["linkTarget"], posixpath.dirname(full))
                continue
            if mode & (1 << 31):  # Go's os.ModeDir
                with contextlib.suppress(Exception):
                    stream.close()
                raise SandboxError(f"{full} is a directory")
            size = int(stat.get("size", 0))
            if max_bytes is not None and size > max_bytes:
                with contextlib.suppress(Exception):
                    stream.close()
                raise SandboxError(f"{full} is {size} bytes, more than max_bytes={max_bytes}")
            buf = io.BytesIO()
            for chunk in stream:
                buf.write(chunk)
            buf.seek(0)
            with tarfile.open(fileobj=buf, mode="r") as tar:
                member = next((m for m in tar if m.isfile()), None)
                fh = tar.extractfile(member) if member is not None else None
                if fh is None:
                    raise SandboxError(f"{full} is not a regular file")
                return fh.read()
        raise SandboxError(f"{path}: too many levels of symbolic links")

    # ---------------------------------------------------------------- patches and diffs

    def apply_patch(self, patch: str, *, workdir: str | None = None,
                    partial: bool = False) -> PatchResult:
        """Apply a unified diff: `git apply`, else a fuzzy `patch` (only if its dry run
        passes, so a failure leaves nothing behind), else, if `partial`, `git apply
        --reject` (applies what it can, leaves .rej files)."""
        if not patch.strip():
            return PatchResult(True, "empty", "empty patch", "")
        if not patch.endswith("\n"):
            patch += "\n"  # git apply calls a missing final newline a corrupt patch
        wd = self._abs(workdir or self.workdir)
        pfile = f"{INTERNAL_DIR}/patch.diff"
        # Our scratch directory is world-writable (sticky), so commands running as the
        # image's non-root user can use it too.
        self._put_archive({pfile: (patch, 0o644)}, dirs={INTERNAL_DIR: 0o1777})
        q = shlex.quote(pfile)
        logs: list[str] = []
        reasons: list[str] = []

        def attempt(label: str, script: str) -> ExecResult:
            res = self._sh(script, f"`{label}`", workdir=wd)
            logs.append(f"$ {label}  (exit {res.exit_code})\n{res.output}".rstrip())
            return res

        res = attempt("git apply --verbose", f"{GIT} apply --verbose {q}")
        if res.exit_code == 0:
            return PatchResult(True, "git apply", "applied cleanly", "\n".join(logs))
        reasons.append(f"git apply: {_first_error(res.output)}")

        popts = f"--batch --forward --no-backup-if-mismatch --fuzz=5 -p1 -i {q}"
        res = attempt("patch --dry-run", f"patch --dry-run {popts}")
        if res.exit_code == 0:
            res = attempt("patch --fuzz=5", f"patch {popts}")
            if res.exit_code == 0:
                return PatchResult(True, "patch --fuzz", "applied with fuzz", "\n".join(logs))
        reasons.append(f"patch: {_first_patch_error(res.output)}")

        if partial:
            res = attempt("git apply --verbose --reject", f"{GIT} apply --verbose --reject {q}")
            applied = bool(re.search(r"^(Applied patch .* cleanly|Hunk #\d+ applied)",
                                     res.output, re.M))
            if applied:
                rejected = re.findall(r"^Rejected hunk #\d+\.?", res.output, re.M)
                why = (f"partially applied, {len(rejected)} hunk(s) rejected (.rej files left)"
                       if rejected else "applied")
                return PatchResult(True, "git apply --reject", why, "\n".join(logs))
            reasons.append(f"git apply --reject: {_first_error(res.output)}")
        return PatchResult(False, None, "patch does not apply: " + "; ".join(reasons),
                           "\n".join(logs))

    def changed_paths(self) -> list[str]:
        """Paths the container added or changed against its image (the engine's diff; its
        own bookkeeping files included). Deleted paths are not listed."""
        self._check_open()
        try:
            changes = self._client.api.diff(self.id) or []
        except NotFound as exc:
            raise self._died("before diff") from exc
        except (DockerException, OSError) as exc:
            raise SandboxError(f"cannot list changed paths: {_short(exc)}") from exc
        return [c["Path"] for c in changes if c.get("Kind") in (0, 1)]

    def diff(self, *, workdir: str | None = None, base: str = "HEAD",
             max_bytes: int = 1 << 30) -> str:
        """`git diff --binary` of the work tree against `base`, untracked files included
        (ignored ones not). SandboxError past `max_bytes`.

        Uses a throwaway copy of the index, so the repository's own index is untouched.
        """
        wd = self._abs(workdir or self.workdir)
        qb = shlex.quote(base)
        script = f"""set -e
gitdir=$({GIT} rev-parse --absolute-git-dir)
mkdir -p {INTERNAL_DIR}
idx={INTERNAL_DIR}/diff-index.$$
trap 'rm -f "$idx"' EXIT
# -p: the copy keeps the index's mtime, by which git knows to re-read a file changed in the
# same second as the index was written; a fresh one makes a same-size edit look unchanged
if [ -f "$gitdir/index" ]; then cp -p "$gitdir/index" "$idx"; else rm -f "$idx"; fi
base={qb}
if ! {GIT} rev-parse -q --verify "$base^{{commit}}" >/dev/null; then
  if [ "$base" = HEAD ]; then base={_EMPTY_TREE}; else echo "unknown base: $base" >&2; exit 3; fi
fi
GIT_INDEX_FILE="$idx" {GIT} add -A .
GIT_INDEX_FILE="$idx" {GIT} diff --cached --binary --no-color --no-ext-diff --no-textconv \
  "$base"
echo {_DIFF_END}
"""
        res = self._sh(script, "diff", workdir=wd, max_output=max_bytes)
        if res.exit_code != 0:
            raise DiffError(f"diff failed in {wd}: {_first_error(res.stderr or res.stdout)}")
        if res.stdout_truncated:
            raise DiffError(f"the diff is over {max_bytes >> 20} MiB")
        # An empty diff must mean "no changes", never "the output got lost on the way".
        if not res.stdout.endswith(_DIFF_END + "\n"):
            raise SandboxError("the diff's output arrived incomplete (no end marker)")
        return res.stdout[: -len(_DIFF_END) - 1]

    # ---------------------------------------------------------------- snapshots

    def snapshot(self, paths: Sequence[str] | None = None) -> Snapshot:
        """paths=None: commit the whole container to a labelled image (removed on close).
        paths given: tar those paths inside the container (cheap)."""
        self._check_open()
        if paths is None:
            return self._snapshot_image()
        abs_paths = tuple(dict.fromkeys(self._abs(p) for p in paths))
        if not abs_paths:
            raise SandboxError("snapshot needs at least one path")
        if "/" in abs_paths:
            raise SandboxError("cannot take a path snapshot of / (use snapshot() for that)")
        store = next((d for d in (INTERNAL_DIR, "/var/tmp/.envfactory", "/.envfactory")
                      if not any(d == p or d.startswith(p + "/") for p in abs_paths)), None)
        if store is None:
            raise SandboxError("the snapshot paths cover every place a snapshot can be kept")
        with self._lock:
            self._snap_seq += 1
            ref = f"{store}/snap-{self._snap_seq}-{uuid.uuid4().hex[:8]}.tar"
        quoted = " ".join(shlex.quote(p.lstrip("/")) for p in abs_paths)
        # Paths missing now are left out of the tar; restore removes them again.
        script = (f"set -e; mkdir -p {shlex.quote(store)}; cd /; set --; "
                  f"for p in {quoted}; do if [ -e \"$p\" ] || [ -L \"$p\" ]; then "
                  f"set -- \"$@\" \"$p\"; fi; done; "
                  f"tar -cpf {shlex.quote(ref)} --numeric-owner --files-from /dev/null \"$@\"")
        res = self._sh(script, "snapshot", workdir="/")
        if res.exit_code != 0:
            raise SandboxError(f"snapshot failed: {_first_error(res.output)}")
        return Snapshot("fs", ref, abs_paths)

    def _snapshot_image(self) -> Snapshot:
        api = self._client.api
        with self._lock:
            self._snap_seq += 1
            seq = self._snap_seq
        repo = f"{get_settings().image_prefix}-snapshot"
        tag = f"{self.id[:12]}-{seq}"
        labels = {LABEL: "1", KIND_LABEL: "snapshot", SNAPSHOT_OF_LABEL: self.id,
                  OWNER_LABEL: _owner(), CREATED_LABEL: str(int(time.time()))}
        try:
            res = api.commit(self.id, repository=repo, tag=tag, pause=True,
                             conf={"Labels": labels})
        except NotFound as exc:
            raise self._died("before snapshot") from exc
        except (DockerException, OSError) as exc:
            raise SandboxError(f"snapshot (docker commit) failed: {_short(exc)}") from exc
        image_id = str(res["Id"])
        self._state.images.append(image_id)
        return Snapshot("image", image_id, ())

    def disk_usage(self) -> int:
        """Bytes this container added on top of its image (its writable layer)."""
        self._check_open()
        rows = self._client.api.containers(all=True, size=True, filters={"id": self.id})
        if not rows:
            raise self._died("before disk_usage")
        return int(rows[0].get("SizeRw") or 0)

    def commit(self, tag: str, *, labels: Mapping[str, str] | None = None,
               changes: Sequence[str] = ()) -> str:
        """Commit the container to a permanent image `tag` (an env image); returns its id.

        Unlike snapshot(), the image is not removed on close and carries only the given
        labels (the sandbox's own labels would make gc() treat it as a leftover).
        """
        self._check_open()
        repo, _, version = tag.rpartition(":")
        if not repo or "/" in version:
            raise SandboxError(f"commit needs a repository:tag, got {tag!r}")
        conf: dict[str, Any] = {"Labels": {k: v for k, v in (labels or {}).items()}}
        if changes:
            conf.update(_parse_changes(changes))
        try:
            res = self._client.api.commit(self.id, repository=repo, tag=version, pause=True,
                                          conf=conf)
        except NotFound as exc:
            raise self._died("before commit") from exc
        except (DockerException, OSError) as exc:
            raise SandboxError(f"docker commit failed: {_short(exc)}") from exc
        return str(res["Id"])

    def restore(self, snap: Snapshot) -> None:
        """Roll back to a snapshot. image: the container is replaced by a new one from the
        snapshot image, with the same configuration (its id changes); fs: the paths are
        wiped and untarred."""
        self._check_open()
        if snap.kind == "fs":
            quoted = " ".join(shlex.quote(p) for p in snap.paths)
            ref = shlex.quote(snap.ref)
            script = (f"set -e; test -f {ref} || {{ echo 'snapshot file {snap.ref} is gone'"
                      f" >&2; exit 3; }}; rm -rf {quoted}; tar -xpf {ref} -C / --numeric-owner")
            res = self._sh(script, "restore", workdir="/")
            if res.exit_code != 0:
                raise SandboxError(f"restore failed: {_first_error(res.output)}")
            return
        if snap.kind != "image":
            raise SandboxError(f"unknown snapshot kind {snap.kind!r}")
        api = self._client.api
        old = self.id
        kwargs = dict(self._create_kwargs)
        labels = dict(kwargs["labels"])
        labels[CREATED_LABEL] = str(int(time.time()))
        kwargs["labels"] = labels
        name = kwargs.get("name")
        if name:  # free the name for the replacement
            with contextlib.suppress(DockerException, OSError):
                api.rename(old, f"{name}-old-{uuid.uuid4().hex[:6]}")
        try:
            new = self._create(self._client, snap.ref, kwargs)
        except SandboxError:
            if name:  # the old container carries on as before
                with contextlib.suppress(DockerException, OSError):
                    api.rename(old, name)
            raise
        with self._lock:
            self._state.container_id = new
            self._oom_seen = 0  # a new container, a new memory cgroup
        with contextlib.suppress(NotFound):
            try:
                api.remove_container(old, force=True, v=True)
            except (DockerException, OSError) as exc:
                log.warning("could not remove replaced container %s: %s", old[:12], _short(exc))


def _parse_changes(changes: Sequence[str]) -> dict[str, Any]:
    """The few Dockerfile-style changes an env image needs: ENV K=V, WORKDIR, CMD [...]."""
    conf: dict[str, Any] = {}
    for change in changes:
        word, _, rest = change.strip().partition(" ")
        word = word.upper()
        if word == "ENV":
            conf.setdefault("Env", []).append(rest.strip())
        elif word == "WORKDIR":
            conf["WorkingDir"] = rest.strip()
        elif word == "CMD":
            conf["Cmd"] = json.loads(rest)
        else:
            raise SandboxError(f"unsupported image change {change!r} (ENV, WORKDIR, CMD)")
    return conf


_KEY_ERRORS = re.compile(r"patch failed|does not apply|does not exist|already exists|"
                         r"corrupt patch|No such file|No valid patches|not a git repository|"
                         r"unknown base|cannot|fatal:")


def _first_error(text: str) -> str:
    """The most telling line of a failed command: a known error, else any error line."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for pick in (lambda ln: _KEY_ERRORS.search(ln),
                 lambda ln: ln.startswith("error:") or "error" in ln.lower()):
        for ln in lines:
            if pick(ln):
                return ln[:300]
    return (lines[0] if lines else "no output")[:300]


def _first_patch_error(text: str) -> str:
    """GNU patch's first failure, with the file it was checking."""
    current = None
    for ln in (ln.strip() for ln in text.splitlines()):
        m = re.match(r"(?:checking|patching) file (.+)", ln)
        if m:
            current = m.group(1).strip("'\"")
            continue
        if re.search(r"FAILED|can't find file|No such file|malformed|Only garbage|"
                     r"Reversed|already exists|doesn't exist|not a regular", ln):
            return f"{current}: {ln}"[:300] if current and current not in ln else ln[:300]
    return _first_error(text)


# --------------------------------------------------------------------------- gc


def _owner_dead(owner: str, created: float) -> bool:
    """True if the owner process ran on this host and is gone (or its pid was reused)."""
    host, _, pid_s = owner.rpartition(":")
    if host != socket.gethostname() or not pid_s.isdigit():
        return False
    pid = int(pid_s)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass
    # The pid exists: it is the owner only if it started before the container was made.
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            ticks = int(fh.read().rsplit(b")", 1)[1].split()[19])
        with open("/proc/stat", encoding="ascii") as fh:
            btime = next(int(ln.split()[1]) for ln in fh if ln.startswith("btime"))
        started = btime + ticks / os.sysconf("SC_CLK_TCK")
        return bool(created) and started > created + 2
    except (OSError, ValueError, IndexError, StopIteration):
        return False


def gc(*, all: bool = False, older_than_s: float | None = None, mine: bool = False) -> list[str]:
    """Remove labelled leftovers: sandbox containers and snapshot images whose owner
    process (on this host) is dead, or older than `older_than_s`, or every one (`all`),
    or this process's own (`mine`: an interrupted command on its way out, which may have
    been stopped between the engine creating a container and the sandbox holding it).
    Returns the ids removed."""
    api = engine.client().api
    now = time.time()
    removed: list[str] = []

    def doomed(labels: dict[str, str], created_fallback: float) -> bool:
        try:
            created = float(labels.get(CREATED_LABEL) or created_fallback)
        except ValueError:
            created = created_fallback
        if all or (mine and labels.get(OWNER_LABEL) == _owner()):
            return True
        if mine:
            return False
        if older_than_s is not None and now - created > older_than_s:
            return True
        return _owner_dead(labels.get(OWNER_LABEL, ""), created)

    try:
        containers = api.containers(all=True, filters={"label": f"{LABEL}=1"})
        images = api.images(filters={"label": [f"{LABEL}=1", f"{KIND_LABEL}=snapshot"]})
    except (DockerException, OSError) as exc:
        raise SandboxError(f"gc cannot list sandboxes: {_short(exc)}") from exc
    for c in containers:
        labels = c.get("Labels") or {}
        if labels.get(KIND_LABEL, "container") != "container":
            continue
        if doomed(labels, float(c.get("Created") or now)):
            with contextlib.suppress(NotFound):
                try:
                    api.remove_container(c["Id"], force=True, v=True)
                    removed.append(c["Id"])
                except (DockerException, OSError) as exc:
                    log.warning("gc: cannot remove container %s: %s", c["Id"][:12], _short(exc))
    # Newest first, so children go before the snapshots they were made from.
    for img in sorted(images, key=lambda i: i.get("Created") or 0, reverse=True):
        labels = img.get("Labels") or {}
        if doomed(labels, float(img.get("Created") or now)):
            with contextlib.suppress(NotFound):
                try:
                    api.remove_image(img["Id"], force=True)
                    removed.append(img["Id"])
                except (DockerException, OSError) as exc:
                    log.warning("gc: cannot remove image %s: %s", img["Id"][:19], _short(exc))
    return removed

