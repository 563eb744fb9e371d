"""Host-side process control for a local engine's containers: read /proc, find a
container's processes by cgroup, SIGKILL them without forking inside the container (so it
works under a fork bomb). Used by `envs.sandbox`; nothing here talks to the engine.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time


def proc_stat(pid: int) -> tuple[int, int] | None:
    """(ppid, pgrp) of a host process, or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2:].split()
    try:
        return int(fields[1]), int(fields[2])
    except (IndexError, ValueError):
        return None


def start_time(pid: int) -> int:
    """When a host process started (clock ticks since boot); pids can wrap, this cannot."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
        return int(data[data.rfind(b")") + 2:].split()[19])
    except (OSError, IndexError, ValueError):
        return 1 << 62


def proc_state(pid: int) -> str | None:
    """One-letter state of a host process (R, S, Z, ...), None if it does not exist."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    return data[data.rfind(b")") + 2:][:1].decode("ascii", "replace") or None


def in_container(pid: int, container_id: str) -> bool:
    try:
        with open(f"/proc/{pid}/cgroup", encoding="utf-8", errors="replace") as fh:
            return container_id in fh.read()
    except OSError:
        return False


def has_token(pid: int, token: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return token in fh.read()
    except OSError:
        return False


def host_kill(container_id: str, root_pid: int | None, marker: bytes, *,
               rounds: int = 10, all_but: frozenset[int] | None = None) -> int:
    """SIGKILL processes of the container from the host: the descendants and process
    group of `root_pid`, and every process whose environment contains `marker`
    (reparented or setsid'd children keep their environment); with `all_but`, every
    process of the container but those (`setsid env -i` clears the marker too).

    Only processes in the container's cgroup are touched. Returns how many were signalled.
    """
    killed = 0
    for _ in range(rounds):  # repeat: a fork bomb forks while we kill
        procs: dict[int, tuple[int, int]] = {}
        for name in os.listdir("/proc"):
            if name.isdigit():
                st = proc_stat(int(name))
                if st is not None:
                    procs[int(name)] = st
        targets: set[int] = set()
        if root_pid and root_pid in procs and in_container(root_pid, container_id):
            targets.add(root_pid)
            pgrp = procs[root_pid][1]
            targets.update(p for p, (_, g) in procs.items() if g == pgrp)
        children: dict[int, list[int]] = {}
        for p, (pp, _) in procs.items():
            children.setdefault(pp, []).append(p)
        stack = list(targets)
        while stack:
            for c in children.get(stack.pop(), ()):
                if c not in targets:
                    targets.add(c)
                    stack.append(c)
        targets = {p for p in targets if in_container(p, container_id)}
        targets.update(p for p in procs if p not in targets and in_container(p, container_id)
                       and (has_token(p, marker) if all_but is None else p not in all_but))
        if not targets:
            break
        for p in targets:
            with contextlib.suppress(OSError):
                os.kill(p, signal.SIGKILL)
                killed += 1
        time.sleep(0.02)
    return killed
