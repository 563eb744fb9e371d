"""The Docker engine: connect to it, and where none answers and we are root, install and start one.

Everything in envfactory gets its Docker client from `client()`; only this module and
`envs/sandbox/` / `envs/images.py` talk to the engine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import docker
from docker.errors import DockerException

from envs.config import get_settings
from envs.errors import InfraError

# The host's apt: wait for another apt run (services.sh, a parallel bootstrap) holding its lock.
APT = ("apt-get", "-o", "DPkg::Lock::Timeout=600")

class EngineError(InfraError):
    """The Docker engine cannot be reached or started; the message says why in one line."""


@dataclass(frozen=True)
class EngineInfo:
    server_version: str
    storage_driver: str
    cgroup_version: str
    cgroup_driver: str
    root_dir: str


def ping(timeout: float = 5.0) -> bool:
    try:
        docker.from_env(timeout=int(max(1, timeout))).ping()
        return True
    except (DockerException, OSError):
        return False


@lru_cache(maxsize=1)
def _cached_client(pid: int) -> docker.DockerClient:
    # Keyed by process: a forked child (a Celery pool worker) sharing its parent's pooled
    # HTTP connections would interleave requests on one socket and hang.
    return docker.from_env(timeout=get_settings().docker_timeout)


def client() -> docker.DockerClient:
    """The process-wide Docker client. Raises EngineError with a clear reason."""
    try:
        c = _cached_client(os.getpid())
        c.ping()
        return c
    except (DockerException, OSError) as exc:
        _cached_client.cache_clear()
        raise EngineError(
            f"no Docker engine answers ({_short(exc)}); run `envfactory doctor --fix` "
            "or start dockerd"
        ) from exc


def reset_client() -> None:
    """Forget the cached client (after a fork, or after the engine restarted)."""
    _cached_client.cache_clear()


def info() -> EngineInfo:
    data = client().info()
    return EngineInfo(
        server_version=str(data.get("ServerVersion", "?")),
        storage_driver=str(data.get("Driver", "?")),
        cgroup_version=str(data.get("CgroupVersion", "?")),
        cgroup_driver=str(data.get("CgroupDriver", "?")),
        root_dir=str(data.get("DockerRootDir", "?")),
    )


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]


def ensure_engine(*, install: bool = True, wait_s: float = 60.0, log=print) -> EngineInfo:
    """Make sure an engine answers: install Debian's docker.io and start dockerd if needed.

    Only acts when no engine answers; never touches a running one. Needs root to install or
    start; without it, raises EngineError saying what to do.
    """
    if ping():
        reset_client()
        return info()
    is_root = hasattr(os, "geteuid") and os.geteuid() == 0
    dockerd = shutil.which("dockerd")
    if dockerd is None:
        if not install:
            raise EngineError("no Docker engine answers and dockerd is not installed")
        if not is_root:
            raise EngineError(
                "no Docker engine answers and dockerd is not installed; as root run "
                "`apt-get install docker.io` (or ask your admin), then `envfactory doctor`"
            )
        if shutil.which("apt-get") is None:
            raise EngineError("no Docker engine answers; install Docker (no apt-get here)")
        log("installing Debian's docker.io (no engine answers) ...")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        for cmd in ([*APT, "update", "-qq"], [*APT, "install", "-y", "-qq", "docker.io"]):
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
            if proc.returncode != 0:
                tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["?"]
                raise EngineError(f"`{' '.join(cmd)}` failed: {tail[0]}")
        dockerd = shutil.which("dockerd")
        if dockerd is None:
            raise EngineError("docker.io installed but dockerd is not on PATH")
    if not is_root:
        raise EngineError(
            "no Docker engine answers and starting dockerd needs root; start it with "
            "`sudo dockerd &` or `sudo systemctl start docker`"
        )
    home = get_settings().home
    home.mkdir(parents=True, exist_ok=True)
    logfile = home / "dockerd.log"
    log(f"starting dockerd (log: {logfile}) ...")
    with open(logfile, "ab") as fh:
        # A session of its own so the engine outlives this command.
        subprocess.Popen(
            [dockerd], stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if ping(timeout=2):
            reset_client()
            return info()
        time.sleep(0.5)
    raise EngineError(f"dockerd did not answer within {wait_s:.0f}s; see {_tail(logfile)}")


def _tail(path: Path) -> str:
    try:
        lines = path.read_text(errors="replace").strip().splitlines()
        return f"{path}: {lines[-1][:200]}" if lines else str(path)
    except OSError:
        return str(path)
