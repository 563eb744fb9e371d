"""`Sandbox`, put together: each part of it lives in a module of its own.

    SandboxBase   container.py   start, close, alive, the finalizer
    ProcessOps    processes.py   kill_all; dead-container and OOM checks
    ExecOps       execution.py   exec (stream.py reads its output)
    FileOps       files.py       put_file(s), put_dir, get_file
    PatchOps      patches.py     apply_patch, diff, changed_paths
    SnapshotOps   snapshots.py   snapshot, restore, commit, disk_usage

Each part subclasses only the parts it uses, so its `self` offers exactly those.
"""

from __future__ import annotations

from envs.sandbox.patches import PatchOps
from envs.sandbox.snapshots import SnapshotOps


class Sandbox(PatchOps, SnapshotOps):
    """One hardened container. Use `Sandbox.start(...)`, ideally as a context manager."""
