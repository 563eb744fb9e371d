"""Host-side process control for a local engine's containers: look at host processes
(psutil), find a container's processes by cgroup, SIGKILL them without forking inside the
container (so it works under a fork bomb). Used by `envs.sandbox`; nothing here talks to
the engine.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Sequence

import psutil


def proc_stat(pid: int) -> tuple[int, int] | None:
    """(ppid, pgrp) of a host process, or None if it does not exist."""
    try:
        return psutil.Process(pid).ppid(), os.getpgid(pid)
    except (psutil.Error, OSError):
        return None


def start_time(pid: int) -> float | None:
    """When a host process started (seconds since the epoch), None if it does not exist;
    pids can wrap, this cannot."""
    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return None


def proc_state(pid: int) -> str | None:
    """psutil's status of a host process ("running", "sleeping", "zombie", ...), None if
    it does not exist."""
    try:
        return psutil.Process(pid).status()
    except psutil.NoSuchProcess:  # a zombie answers "zombie" here, it is not an error
        return None
    except psutil.Error:
        return "unknown"


def exited(pid: int) -> bool:
    """Has the process ended: gone, or a zombie waiting to be reaped?"""
    return proc_state(pid) in (None, psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)


def in_container(pid: int, container_id: str) -> bool:
    # psutil has no cgroup view; the engine names a container's cgroup after its id.
    try:
        with open(f"/proc/{pid}/cgroup", encoding="utf-8", errors="replace") as fh:
            return container_id in fh.read()
    except OSError:
        return False


def visible(pid: int, container_id: str) -> bool:
    """Can we act on this container's processes from here: `pid` is one of them and its
    environment is readable to us (a local engine, and we are root)?"""
    if not in_container(pid, container_id):
        return False
    try:
        psutil.Process(pid).environ()
    except psutil.Error:
        return False
    return True


def has_token(proc: psutil.Process | int, token: str) -> bool:
    """Does the process's environment contain `token` (as `NAME=value` text)?"""
    try:
        env = (proc if isinstance(proc, psutil.Process) else psutil.Process(proc)).environ()
    except psutil.Error:
        return False
    return any(token in f"{k}={v}" for k, v in env.items())


def oldest_child(parent: int, argv: Sequence[str]) -> int | None:
    """The pid of `parent`'s oldest child running exactly `argv`, None if there is none."""
    try:
        kids = psutil.Process(parent).children()
    except psutil.Error:
        return None
    for kid in sorted(kids, key=_created):
        with contextlib.suppress(psutil.Error):
            if kid.cmdline() == list(argv):
                return kid.pid
    return None


def _created(proc: psutil.Process) -> float:
    try:
        return proc.create_time()
    except psutil.Error:
        return float("inf")


def _pgrp(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None


def host_kill(container_id: str, root_pid: int | None, marker: str, *,
              rounds: int = 10, all_but: frozenset[int] | None = None) -> int:
    """SIGKILL processes of the container from the host: the descendants and process
    group of `root_pid`, and every process whose environment contains `marker`
    (reparented or setsid'd children keep their environment); with `all_but`, every
    process of the container but those (`setsid env -i` clears the marker too).

    Only processes in the container's cgroup are touched. Returns how many were signalled.
    """
    killed = 0
    for _ in range(rounds):  # repeat: a fork bomb forks while we kill
        procs = {p.pid: p for p in psutil.process_iter()
                 if in_container(p.pid, container_id)}
        targets: dict[int, psutil.Process] = {}
        if root_pid and root_pid in procs:
            root = procs[root_pid]
            targets[root_pid] = root
            pgrp = _pgrp(root_pid)
            if pgrp is not None:
                targets.update((p, proc) for p, proc in procs.items() if _pgrp(p) == pgrp)
            with contextlib.suppress(psutil.Error):
                targets.update((c.pid, c) for c in root.children(recursive=True)
                               if c.pid in procs)
        targets.update((p, proc) for p, proc in procs.items() if p not in targets
                       and (has_token(proc, marker) if all_but is None else p not in all_but))
        if not targets:
            break
        for proc in targets.values():
            with contextlib.suppress(psutil.Error):
                proc.kill()  # psutil checks first that the pid was not reused
                killed += 1
        time.sleep(0.02)
    return killed
