"""`gc()`: remove the sandbox containers and snapshot images nobody will close.

A process that crashed, or was killed, leaves its sandboxes behind; their labels
(`labels.py`) say which process on which host made them, and when.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import time

import psutil
from docker.errors import DockerException, NotFound

from envs import engine
from envs.sandbox.errors import SandboxError, short
from envs.sandbox.labels import CREATED_LABEL, KIND_LABEL, LABEL, OWNER_LABEL, owner

log = logging.getLogger(__name__)


def _owner_dead(owner_label: str, created: float) -> bool:
    """True if the owner process ran on this host and is gone (or its pid was reused)."""
    host, _, pid_s = owner_label.rpartition(":")
    if host != socket.gethostname() or not pid_s.isdigit():
        return False
    pid = int(pid_s)
    if pid == os.getpid():
        return False
    try:
        started = psutil.Process(pid).create_time()
    except psutil.NoSuchProcess:
        return True
    except psutil.Error:
        return False
    # The pid exists: it is the owner only if it started before the container was made.
    return bool(created) and started > created + 2


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
        if all or (mine and labels.get(OWNER_LABEL) == owner()):
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
        raise SandboxError(f"gc cannot list sandboxes: {short(exc)}") from exc
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
                    log.warning("gc: cannot remove container %s: %s", c["Id"][:12], short(exc))
    # Newest first, so children go before the snapshots they were made from.
    for img in sorted(images, key=lambda i: i.get("Created") or 0, reverse=True):
        labels = img.get("Labels") or {}
        if doomed(labels, float(img.get("Created") or now)):
            with contextlib.suppress(NotFound):
                try:
                    api.remove_image(img["Id"], force=True)
                    removed.append(img["Id"])
                except (DockerException, OSError) as exc:
                    log.warning("gc: cannot remove image %s: %s", img["Id"][:19], short(exc))
    return removed
