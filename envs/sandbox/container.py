"""The container under a sandbox: create it hardened, know its state, remove it.

`SandboxBase` holds what every part of a `Sandbox` shares: the engine client, the
container's id (which `restore` may change), the lock, and the finalizer that removes
the container and its snapshot images when the sandbox is closed or forgotten.
"""

from __future__ import annotations

import contextlib
import logging
import os
import posixpath
import threading
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from docker.errors import DockerException, ImageNotFound, NotFound

from envs import engine
from envs.config import get_settings
from envs.models import Limits
from envs.sandbox.errors import SandboxDied, SandboxError, short
from envs.sandbox.labels import owned

log = logging.getLogger(__name__)

INTERNAL_DIR = "/tmp/.envfactory"  # the sandbox's own scratch files inside the container

_S = TypeVar("_S", bound="SandboxBase")


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
                        state.container_id[:12], short(exc))
    # Newest first: a snapshot of a restored container is a child of the older snapshot.
    for image_id in reversed(state.images):
        with contextlib.suppress(NotFound):
            try:
                api.remove_image(image_id, force=True)
            except (DockerException, OSError) as exc:
                log.warning("could not remove snapshot image %s: %s", image_id[:19], short(exc))
    state.images.clear()


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


class SandboxBase:
    """One hardened container: its lifecycle. `Sandbox` adds exec, files, patches and
    snapshots on top."""

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
        self._state = _State(client=client, container_id=container_id)
        self._finalizer = weakref.finalize(self, _cleanup, self._state)

    @classmethod
    def start(cls: type[_S], image: str, *, network: bool = False,
              limits: Limits | None = None, workdir: str = "/",
              env: dict[str, str] | None = None, cap_add: Sequence[str] = (),
              labels: dict[str, str] | None = None, name: str | None = None) -> _S:
        """Create and start a hardened container from a local image."""
        client = engine.client()
        limits = limits or _default_limits()
        cpus = limits.cpus
        ncpu = _engine_cpus(client)
        if ncpu and cpus > ncpu:
            cpus = float(ncpu)  # asking for more than the host has is an engine error
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
            labels=owned("container", labels),
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
            raise SandboxError(f"cannot create a sandbox from {image}: {short(exc)}") from exc
        try:
            api.start(cid)
        except (DockerException, OSError) as exc:
            with contextlib.suppress(DockerException, OSError):
                api.remove_container(cid, force=True)
            raise SandboxError(f"cannot start a sandbox from {image}: {short(exc)}") from exc
        return cid

    @property
    def id(self) -> str:
        return self._state.container_id

    @property
    def closed(self) -> bool:
        return self._state.closed

    def __repr__(self) -> str:
        return f"Sandbox({self.id[:12]}, image={self.image!r})"

    def __enter__(self: _S) -> _S:
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
            how = f"engine error: {short(exc)}"
        return SandboxDied(f"sandbox {self.id[:12]} died {during} ({how})")

    def _abs(self, path: str, base: str | None = None) -> str:
        return posixpath.normpath(posixpath.join(base or self.workdir, path))

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
