"""A warm sandbox pool for RL episodes: a hard cap on live containers, a creation-rate limit,
warm spares per recipe, recycling off the hot path, and metrics a test can assert on.

Reset is "hand out an already-started clean sandbox". The dirty one goes back to the pool and
is made clean again in the background, one of two ways, chosen per recipe:

- RECREATE: destroy it and start a fresh one from the image (always safe; terminal tasks).
- RESTORE: clean it in place — kill every process, put the workdir back at its commit with
  git, wipe /tmp — then *prove* nothing outside the workdir changed: every path whose ctime is
  newer than a marker written when the sandbox became clean must be a tracked file or a
  directory inside the workdir, or under /tmp. ctime cannot be set from user space, so a
  `touch -d` does not hide a change. Anything else (pip install, edits in /etc, a Go build
  cache in /root) makes it fall back to RECREATE. SWE tasks use this.

Every Docker call runs in the pool's bounded thread executor, never on the event loop. The cap
counts sandboxes being created, idle, leased and being destroyed; a slot is freed only once the
container is gone, so `metrics.max_live <= cap` holds for what the engine really holds.

Settings come from `ENVFACTORY_POOL_*` variables (`ENVFACTORY_POOL_MAX_LIVE`, `..._CREATE_RATE`,
`..._SPARES`), or from a `PoolConfig` passed in.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import hashlib
import json
import logging
import math
import shlex
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from envs.instance import setup_overlay
from envs.models import Limits
from envs.sandbox import GIT as _GIT
from envs.sandbox import INTERNAL_DIR, Sandbox, SandboxError

log = logging.getLogger(__name__)
T = TypeVar("T")

MARKER = "/var/tmp/.envfactory-clean"  # written when a sandbox becomes clean (see RESTORE)
# The marker holds the listing of / : the engine leaves /'s ctime newer than the marker (and
# its bind-mounted /etc/hosts, hostname, resolv.conf), so / is compared by its entries.
# The marker's own times are printed and kept: an agent that moves its mtime into the future
# (to hide later changes from -cnewer) changes them, and the sandbox is recreated.
_STAT = f"echo \"--stat-- $(stat -c '%y %z' {MARKER})\""
_MARK = f"LC_ALL=C ls -A / > {MARKER} && {_STAT}"
_ENGINE_FILES = frozenset({"/etc/hosts", "/etc/hostname", "/etc/resolv.conf"})


class ResetMode(str, Enum):
    RECREATE = "recreate"
    RESTORE = "restore"


class PoolConfig(BaseSettings):
    """Pool settings; each field is also `ENVFACTORY_POOL_<FIELD>`."""

    model_config = SettingsConfigDict(env_prefix="ENVFACTORY_POOL_", extra="ignore",
                                      frozen=True)

    max_live: int = Field(default=8, ge=1, description="hard cap on live sandboxes")
    create_rate: float = Field(default=4.0, gt=0, description="sandbox creations per second")
    create_burst: int = Field(default=4, ge=1, description="creations allowed back to back")
    spares: int = Field(default=2, ge=0, description="warm spares kept per recipe in use")
    threads: int = Field(default=0, ge=0, description="executor threads (0: 2*max_live+4)")
    start_timeout: float = Field(default=120.0, gt=0, description="seconds for setup scripts")


@dataclass(frozen=True)
class Recipe:
    """How to make one clean sandbox; equal recipes share spares."""

    image: str
    workdir: str = "/"
    network: bool = False
    limits: Limits = field(default_factory=Limits)
    env: tuple[tuple[str, str], ...] = ()
    labels: tuple[tuple[str, str], ...] = ()
    setup: str = ""  # run once after start (an SWE checkout); failure discards the sandbox
    reset_mode: ResetMode = ResetMode.RECREATE
    restore_commit: str = ""  # RESTORE: the commit the workdir goes back to ("" = HEAD)

    @classmethod
    def make(cls, image: str, *, env: Mapping[str, str] | None = None,
             labels: Mapping[str, str] | None = None, **kw: Any) -> Recipe:
        return cls(image=image, env=tuple(sorted((env or {}).items())),
                   labels=tuple(sorted((labels or {}).items())), **kw)

    @property
    def key(self) -> str:
        blob = json.dumps([self.image, self.workdir, self.network, self.limits.model_dump(),
                           self.env, self.labels, self.setup, self.reset_mode.value,
                           self.restore_commit], sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


class PoolMetrics(BaseModel):
    """A snapshot of the pool's counters (`Pool.metrics()`)."""

    model_config = ConfigDict(frozen=True)

    cap: int
    live: int
    max_live: int
    idle: int
    leased: int
    warm_hits: int
    cold_starts: int
    created: int
    destroyed: int
    restored: int  # recycled in place (RESTORE)
    recreated: int  # recycled by destroy + fresh start (RECREATE, or RESTORE's fallback)
    create_failures: int
    resets: int
    reset_p50_s: float | None
    reset_p95_s: float | None
    acquire_p50_s: float | None
    acquire_p95_s: float | None


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, math.ceil(q / 100 * len(ordered)) - 1))
    return ordered[k]


class TokenBucket:
    """Creation-rate limit: `rate` tokens a second, at most `burst` saved up."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = rate, float(burst)
        self._tokens = float(burst)
        self._at = time.monotonic()
        self._lock = asyncio.Lock()

    async def take(self) -> None:
        async with self._lock:  # one waiter at a time keeps the spacing exact
            while True:
                now = time.monotonic()
                self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
                self._at = now
                if self._tokens >= 1.0:
                    self._tokens -= 1.0
                    return
                await asyncio.sleep((1.0 - self._tokens) / self.rate)


def _marker(stdout: str) -> str:
    return next((ln for ln in stdout.splitlines() if ln.startswith("--stat-- ")), "")


@dataclass
class _Slot:
    """One live sandbox the pool owns."""

    recipe: Recipe
    sandbox: Sandbox
    marker: str = ""  # the marker's times when it was written (RESTORE)
    born: float = field(default_factory=time.monotonic)


_POOLS: weakref.WeakSet[Pool] = weakref.WeakSet()


def _close_all_at_exit() -> None:
    for pool in list(_POOLS):
        pool.close_sync()


atexit.register(_close_all_at_exit)


class Pool:
    """Warm sandboxes per recipe under a hard cap. Use as `async with Pool(...) as pool:`.

    A pool belongs to the event loop it is first used on.
    """

    def __init__(self, config: PoolConfig | None = None, **overrides: Any) -> None:
        base = config or PoolConfig()
        self.config = base.model_copy(update=overrides) if overrides else base
        self.cap = self.config.max_live
        threads = self.config.threads or 2 * self.cap + 4
        self._executor = ThreadPoolExecutor(max_workers=threads,
                                            thread_name_prefix="envfactory-pool")
        self._bucket = TokenBucket(self.config.create_rate, self.config.create_burst)
        self._cond: asyncio.Condition | None = None
        self._idle: dict[str, deque[_Slot]] = {}
        self._leased: dict[int, _Slot] = {}  # id(sandbox) -> slot
        self._creating: dict[str, int] = {}
        self._wanted: dict[str, Recipe] = {}  # recipes that keep spares
        self._live = 0
        self._max_live = 0
        self._waiting = 0  # acquirers waiting for a slot: spares yield to them
        self._waiting_for: dict[str, int] = {}  # ... per recipe: its idle ones are not evicted
        self._tasks: set[asyncio.Task[Any]] = set()
        self._all: dict[int, Sandbox] = {}  # every sandbox alive, for the sync/atexit close
        self._all_lock = threading.Lock()
        self._closed = False
        self._counts = dict(warm_hits=0, cold_starts=0, created=0, destroyed=0, restored=0,
                            recreated=0, create_failures=0)
        self._resets: list[float] = []
        self._acquires: list[float] = []
        _POOLS.add(self)

    # ------------------------------------------------------------------ plumbing

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a blocking call (a Sandbox method) in the pool's executor."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    @property
    def _c(self) -> asyncio.Condition:
        if self._cond is None:
            self._cond = asyncio.Condition()
        return self._cond

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def __aenter__(self) -> Pool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ metrics

    def record_reset(self, seconds: float) -> None:
        self._resets.append(seconds)

    def metrics(self) -> PoolMetrics:
        idle = sum(len(q) for q in self._idle.values())
        return PoolMetrics(
            cap=self.cap, live=self._live, max_live=self._max_live, idle=idle,
            leased=len(self._leased), resets=len(self._resets),
            reset_p50_s=percentile(self._resets, 50), reset_p95_s=percentile(self._resets, 95),
            acquire_p50_s=percentile(self._acquires, 50),
            acquire_p95_s=percentile(self._acquires, 95), **self._counts)

    # ------------------------------------------------------------------ slots

    async def _reserve(self, recipe: Recipe, *, wait: bool, evict: bool = True) -> bool:
        """Take one unit of the cap (for a creation). When full, evicts an idle sandbox of
        another recipe (if `evict`) and waits for the slot (or, if not `wait`, gives up)."""
        async with self._c:
            while True:
                if self._closed:
                    raise SandboxError("the pool is closed")
                if self._live < self.cap:
                    self._live += 1
                    self._max_live = max(self._max_live, self._live)
                    return True
                victim = self._evictable(recipe.key) if evict else None
                if victim is not None:
                    self._spawn(self._destroy(victim))  # its slot frees once it is gone
                if not wait:
                    return False
                await self._c.wait()

    def _evictable(self, key: str) -> _Slot | None:
        for k, q in self._idle.items():
            if k != key and q and not self._waiting_for.get(k):
                return q.popleft()
        return None

    async def _free(self) -> None:
        async with self._c:
            self._live -= 1
            self._c.notify_all()

    async def _create(self, recipe: Recipe) -> _Slot:
        """Start one clean sandbox; the caller holds a reserved slot (freed on failure)."""
        try:
            await self._bucket.take()
            sb, marker = await self.run(self._start_blocking, recipe)
        except BaseException:
            self._counts["create_failures"] += 1
            await self._free()
            raise
        self._counts["created"] += 1
        return _Slot(recipe, sb, marker)

    def _start_blocking(self, recipe: Recipe) -> tuple[Sandbox, str]:
        sb = Sandbox.start(recipe.image, network=recipe.network, limits=recipe.limits,
                           workdir=recipe.workdir, env=dict(recipe.env),
                           labels={**dict(recipe.labels), "envfactory.pool": recipe.key})
        with self._all_lock:
            self._all[id(sb)] = sb
            closed = self._closed
        try:
            if closed:  # the pool closed while this creation was in flight
                raise SandboxError("the pool is closed")
            # RESTORE needs the marker (and so `ls`); RECREATE images need nothing of ours.
            parts = [f"(\n{recipe.setup.strip()}\n)"] if recipe.setup.strip() else []
            if recipe.reset_mode is ResetMode.RESTORE:
                parts.append(f"mkdir -p {shlex.quote(MARKER.rsplit('/', 1)[0])} && {_MARK}")
            res = sb.exec(" && ".join(parts), timeout=self.config.start_timeout) if parts \
                else None
            if res is not None and res.exit_code != 0:
                tail = (res.stderr or res.stdout).strip().splitlines()[-1:] or [""]
                raise SandboxError(f"sandbox setup failed (exit {res.exit_code}): "
                                   f"{tail[0][:200]}")
        except BaseException:
            sb.close()
            with self._all_lock:
                self._all.pop(id(sb), None)
            raise
        return sb, _marker(res.stdout) if res is not None else ""

    async def _destroy(self, slot: _Slot) -> None:
        try:
            await self.run(slot.sandbox.close)
        except Exception as exc:  # close is best effort; gc() catches what it leaves
            log.warning("closing %s failed: %s", slot.sandbox, exc)
        with self._all_lock:
            self._all.pop(id(slot.sandbox), None)
        self._counts["destroyed"] += 1
        await self._free()

    # ------------------------------------------------------------------ acquire / release

    async def acquire(self, recipe: Recipe) -> Sandbox:
        """A started, clean sandbox for the recipe: a warm spare if there is one."""
        t0 = time.monotonic()
        self._wanted[recipe.key] = recipe
        try:
            while True:
                slot = await self._take_idle(recipe.key)
                if slot is not None:
                    # A spare can die while it waits (killed, engine restart): check first.
                    if await self.run(slot.sandbox.alive):
                        self._counts["warm_hits"] += 1
                        break
                    self._spawn(self._destroy(slot))
                    continue
                if await self._reserve(recipe, wait=False):
                    slot = await self._create(recipe)
                    self._counts["cold_starts"] += 1
                    break
                # Full: wait for a slot or a spare of this recipe, whichever comes first.
                async with self._c:
                    if not self._idle.get(recipe.key) and self._live >= self.cap \
                            and not self._closed:
                        self._waiting += 1
                        self._waiting_for[recipe.key] = self._waiting_for.get(recipe.key, 0) + 1
                        try:
                            await self._c.wait()
                        finally:
                            self._waiting -= 1
                            self._waiting_for[recipe.key] -= 1
        finally:
            self._acquires.append(time.monotonic() - t0)
        self._leased[id(slot.sandbox)] = slot
        self._spawn(self._replenish(recipe))
        return slot.sandbox

    async def _take_idle(self, key: str) -> _Slot | None:
        async with self._c:
            q = self._idle.get(key)
            return q.popleft() if q else None

    async def _put_idle(self, slot: _Slot) -> None:
        async with self._c:
            if self._closed:
                self._spawn(self._destroy(slot))
                return
            self._idle.setdefault(slot.recipe.key, deque()).append(slot)
            self._c.notify_all()

    async def _replenish(self, recipe: Recipe) -> None:
        """Top up this recipe's spares, only with free slots (spares never wait for one)."""
        key = recipe.key
        while not self._closed and not self._waiting and (
                len(self._idle.get(key, ())) + self._creating.get(key, 0) < self.config.spares):
            if not await self._reserve(recipe, wait=False, evict=False):
                return
            self._creating[key] = self._creating.get(key, 0) + 1
            try:
                slot = await self._create(recipe)
            except Exception as exc:
                if not self._closed:  # closing cancels spares on purpose
                    log.warning("warm spare for %s failed: %s", recipe.image, exc)
                return
            finally:
                self._creating[key] -= 1
            await self._put_idle(slot)

    async def prewarm(self, recipe: Recipe, n: int | None = None) -> None:
        """Start spares for a recipe now (up to `n`, default config.spares) and wait."""
        self._wanted[recipe.key] = recipe
        want = self.config.spares if n is None else n
        while len(self._idle.get(recipe.key, ())) < want:
            if not await self._reserve(recipe, wait=True):
                return
            await self._put_idle(await self._create(recipe))

    async def settle(self) -> None:
        """Wait until background recycling and spare creation are done (tests, benches)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def release(self, sandbox: Sandbox, *, broken: bool = False) -> None:
        """Give a leased sandbox back; it is recycled in the background. `broken`: destroy."""
        slot = self._leased.pop(id(sandbox), None)
        if slot is None:
            return  # released twice, or not ours
        self._spawn(self._recycle(slot, broken))

    async def _recycle(self, slot: _Slot, broken: bool) -> None:
        recipe = slot.recipe
        if not broken and not self._closed and recipe.reset_mode is ResetMode.RESTORE:
            try:
                clean = await self.run(self._restore_blocking, slot)
            except Exception as exc:
                log.info("in-place restore failed, recreating: %s", exc)
                clean = False
            if clean:
                self._counts["restored"] += 1
                await self._put_idle(slot)
                return
        await self._destroy(slot)
        if not self._closed:
            self._counts["recreated"] += 1
            await self._replenish(recipe)

    def _restore_blocking(self, slot: _Slot) -> bool:
        """RESTORE: clean in place; True only if provably nothing outside the workdir changed."""
        sb, recipe = slot.sandbox, slot.recipe
        if not sb.alive():
            return False
        sb.kill_all()
        wd = recipe.workdir.rstrip("/") or "/"
        commit = shlex.quote(recipe.restore_commit or "HEAD")
        # The pipeline prints changed paths outside the allowed places, then the tracked files
        # of the workdir, so Python can tell tracked from untracked changes.
        script = f"""set -e
{_STAT}
cd {shlex.quote(wd)}
{_GIT} -c advice.detachedHead=false checkout -qf {commit}
{_GIT} clean -fdq
{setup_overlay(recipe.restore_commit or "HEAD")}
find /tmp -mindepth 1 -maxdepth 1 ! -path {INTERNAL_DIR} -exec rm -rf {{}} +
find /dev/shm -mindepth 1 -maxdepth 1 -exec rm -rf {{}} + 2>/dev/null || true
echo '--changed--'
find / -xdev \\( -path /proc -o -path /sys -o -path /dev -o -path /tmp \\) -prune -o \\
  -cnewer {MARKER} -print 2>/dev/null || true
echo '--root--'
LC_ALL=C ls -A / | cmp -s - {MARKER} && echo same || echo differs
echo '--tracked--'
{_GIT} ls-files
"""
        # No `clean -x`: ignored files (installed dependencies) stay; the ctime check below
        # sends a sandbox whose ignored files changed to RECREATE instead.
        res = sb.exec(script, timeout=self.config.start_timeout, max_output=64 << 20)
        if res.exit_code != 0 or res.stdout_truncated or not slot.marker \
                or _marker(res.stdout) != slot.marker:
            return False
        head, _, tracked_part = res.stdout.partition("--tracked--\n")
        changed_part, _, root = head.partition("--root--\n")
        changed = changed_part.partition("--changed--\n")[2].splitlines()
        if root.strip() != "same":
            return False
        tracked = {f"{wd}/{p}" for p in tracked_part.splitlines() if p}
        prefix = wd + "/"
        for path in changed:
            if path in (MARKER, MARKER.rsplit("/", 1)[0], wd, "/") or path in tracked \
                    or path in _ENGINE_FILES:
                continue
            if path.startswith(prefix):
                # Inside the workdir: tracked files are back at the commit; a directory is fine
                # if it holds tracked files; a changed ignored file is not fine.
                if f"{wd}/.git" == path or path.startswith(f"{wd}/.git/"):
                    continue  # git's own index and refs
                if any(t.startswith(path + "/") for t in tracked):
                    continue
            return False
        # A fresh marker: the next check counts only what the next episode changes.
        res = sb.exec(_MARK, timeout=30)
        slot.marker = _marker(res.stdout)
        return res.exit_code == 0 and bool(slot.marker)

    # ------------------------------------------------------------------ shutdown

    async def close(self) -> None:
        """Destroy every sandbox and stop. Idempotent; leased sandboxes are destroyed too."""
        if self._closed:
            return
        self._closed = True
        async with self._c:
            self._c.notify_all()
        # Background work sees _closed and winds down (no new spares); let it finish rather
        # than cancel it, so no creation or removal is left half done.
        await self.settle()
        slots = [s for q in self._idle.values() for s in q] + list(self._leased.values())
        self._idle.clear()
        self._leased.clear()
        await asyncio.gather(*(self._destroy(s) for s in slots), return_exceptions=True)
        await self.settle()
        await asyncio.to_thread(self.close_sync)  # anything left, off the loop

    def close_sync(self) -> None:
        """Close every sandbox from any thread (atexit, a loop that is gone)."""
        self._closed = True
        with self._all_lock:
            left = list(self._all.values())
            self._all.clear()
        for sb in left:
            with contextlib.suppress(Exception):
                sb.close()
        self._executor.shutdown(wait=False, cancel_futures=True)
