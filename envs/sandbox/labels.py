"""How the sandbox marks what it owns in the engine, so `gc()` can find what a crashed
process left behind: every container and snapshot image carries these labels."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Mapping

LABEL = "envfactory.sandbox"
OWNER_LABEL = "envfactory.owner"
CREATED_LABEL = "envfactory.created"
KIND_LABEL = "envfactory.kind"  # "container" or "snapshot"
SNAPSHOT_OF_LABEL = "envfactory.snapshot-of"  # on snapshot images: the container they came from


def owner() -> str:
    """This process, as the owner label names it: `host:pid`."""
    return f"{socket.gethostname()}:{os.getpid()}"


def owned(kind: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The labels of a new container or snapshot image of this process (`extra` first:
    ours win)."""
    return {**(extra or {}), LABEL: "1", KIND_LABEL: kind, OWNER_LABEL: owner(),
            CREATED_LABEL: str(int(time.time()))}
