"""The processes inside a sandbox: kill what execs left behind, tell a dead container
from a live one, notice OOM kills.

Where the engine is local and we are root, the container's processes are visible on the
host, and they are found and killed from there (`envs.hostprocs`): no fork inside the
container is needed, so it works under a fork bomb. Otherwise a script inside the
container does what it can.
"""

from __future__ import annotations

import logging
import re
import shlex
import time

from docker.errors import DockerException, NotFound

from envs import hostprocs
from envs.sandbox.container import SandboxBase
from envs.sandbox.errors import short

log = logging.getLogger(__name__)

TOKEN_ENV = "ENVFACTORY_EXEC_TOKEN"  # marks every process of one exec, for the host-side kill
KEEPALIVE = ("sleep", "infinity")  # the container's main process, under docker-init


class ProcessOps(SandboxBase):
    """kill_all and the process bookkeeping `exec` relies on."""

    _oom_seen = 0  # a fresh container's memory cgroup has seen no OOM kills
    _visible_for = ""  # container id the _visible answer is for
    _visible = False
    _init_pid = 0  # host pid of the container's docker-init, when visible
    _keepalive_pid = 0  # host pid of its `sleep infinity`, found on first kill_all

    def kill_all(self) -> int:
        """Kill every process any exec started (background servers, daemons, fork bombs);
        docker-init and the keepalive stay, so the sandbox stays usable.

        The container is frozen while its processes are found and signalled, so nothing
        forks away in between. Returns how many were killed (-1 if unknown).
        """
        self._check_open()
        api = self._client.api
        marker = f"{TOKEN_ENV}="
        if not self._host_visible():
            return self._kill_marked(marker)
        paused = False
        try:
            api.pause(self.id)
            paused = True
        except NotFound as exc:
            raise self._died("before kill_all") from exc
        except (DockerException, OSError) as exc:  # no freezer, or it did not settle
            log.debug("pause failed, killing in rounds: %s", short(exc))
        # Everything but docker-init and the keepalive: a daemon that cleared its
        # environment (`setsid env -i`) carries no marker, and must die all the same.
        keep = self._keep_pids()
        try:
            killed = hostprocs.host_kill(self.id, None, marker, rounds=1 if paused else 10,
                                         all_but=keep)
        finally:
            # Thaw even after a failed pause: a freeze that timed out on our side can still
            # complete in the engine a moment later, so watch a while before trusting it.
            self._thaw(settle=0.0 if paused else 0.5)
        return killed + hostprocs.host_kill(self.id, None, marker, all_but=keep)

    def _kill_marked(self, marker: str, root_pid: int | None = None) -> int:
        """SIGKILL processes carrying `marker` in their environment (and root_pid's tree).

        From the host when it sees the container's processes; otherwise with a script
        inside the container, as well as that can. Returns the count, -1 if unknown.
        """
        if self._host_visible():
            return hostprocs.host_kill(self.id, root_pid, marker)
        self._run_internal(
            f"for d in /proc/[0-9]*; do grep -qa {shlex.quote(marker)} \"$d/environ\" "
            "2>/dev/null && kill -9 \"${d#/proc/}\" 2>/dev/null; done; true")
        return -1

    def _keep_pids(self) -> frozenset[int] | None:
        """Host pids of docker-init and the keepalive (the oldest `sleep infinity` child of
        init); None when they cannot be told apart (then only marked processes die)."""
        if not self._init_pid:
            return None
        if not self._keepalive_pid or hostprocs.proc_stat(self._keepalive_pid) is None:
            pid = hostprocs.oldest_child(self._init_pid, KEEPALIVE)
            if pid is None:
                return None
            self._keepalive_pid = pid
        return frozenset({self._init_pid, self._keepalive_pid})

    def _host_visible(self) -> bool:
        """Are this container's processes visible in our /proc (a local engine, as root)?"""
        cid = self.id
        if self._visible_for != cid:
            try:
                pid = int(self._client.api.inspect_container(cid)["State"]["Pid"] or 0)
            except (DockerException, OSError, KeyError, ValueError):
                pid = 0
            self._visible = bool(pid) and hostprocs.visible(pid, cid)
            self._visible_for = cid
            self._init_pid = pid
        return self._visible

    def _container_dead(self, settle_s: float = 0.5) -> bool:
        """Is the container dead or dying? The engine marks it stopped a moment after its
        processes died, so look at its init on the host, or give the engine `settle_s`."""
        if not self.alive():
            return True
        if self._host_visible():
            return hostprocs.exited(self._init_pid)
        end = time.monotonic() + settle_s
        while time.monotonic() < end:
            time.sleep(0.1)
            if not self.alive():
                return True
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
