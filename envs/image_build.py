"""Building images without an image registry: one `docker build` of an in-memory context
(`build_tag`; `build_context` once per content address), and the bare Debian root under
every toolchain image (`ensure_rootfs`): `FROM debian:<suite>` pulled where a registry
answers, else `debootstrap` + `docker import`.

One builder per tag across processes (`build_lock`); a build that fails is an
`ImageBuildError` naming the step and its last output line, the whole log kept under
`logs_dir/images/`.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from docker.errors import APIError, ImageNotFound

from envs import engine
from envs.config import get_settings
from envs.errors import InfraError
from envs.files import locked

__all__ = ["LABEL_HASH", "LABEL_KIND", "LABEL_RECIPE", "RECIPE_VERSION", "ImageBuildError",
           "Log", "build_context", "build_lock", "build_tag", "content_hash", "context_hash",
           "ensure_rootfs", "exists", "no_log", "remove", "rootfs_tag"]

RECIPE_VERSION = "1"  # bump to invalidate every tag when the build logic itself changes
LABEL_RECIPE = "envfactory.recipe"
LABEL_HASH = "envfactory.hash"
LABEL_KIND = "envfactory.kind"

Log = Callable[[str], None]


class ImageBuildError(InfraError):
    """An image could not be built; the message names the step and the last output line."""


def content_hash(*parts: object) -> str:
    """The hash of everything that decides an image (each part as JSON): its tag's address."""
    h = hashlib.sha256()
    for part in parts:
        h.update(json.dumps(part, sort_keys=True, default=str).encode())
        h.update(b"\0")
    return h.hexdigest()


def rootfs_tag(suite: str, mirror: str) -> str:
    prefix = get_settings().image_prefix
    digest = content_hash("rootfs", RECIPE_VERSION, suite, mirror)
    return f"{prefix}/debian:{suite}-{digest[:12]}"


def no_log(msg: str) -> None:
    pass


@contextlib.contextmanager
def build_lock(tag: str) -> Iterator[None]:
    """One builder per tag across processes (pytest workers, a CLI run)."""
    path = get_settings().home / "locks" / (hashlib.sha1(tag.encode()).hexdigest()[:16] + ".lock")
    with locked(path):
        yield


def exists(tag: str) -> bool:
    try:
        engine.client().images.get(tag)
        return True
    except ImageNotFound:
        return False


def remove(tag: str) -> bool:
    """Remove a local image by tag (an env image that must not be a cache hit); False when
    it was not there or is still in use."""
    try:
        engine.client().images.remove(tag, force=True)
    except (ImageNotFound, APIError):
        return False
    return True


def context_hash(dockerfile: str, files: Mapping[str, bytes]) -> str:
    """The content address of a build: the Dockerfile and every context file."""
    h = hashlib.sha256(dockerfile.encode())
    for name in sorted(files):
        h.update(b"\0" + name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    return h.hexdigest()


def build_context(name: str, dockerfile: str, files: Mapping[str, bytes] | None = None, *,
                  kind: str = "env", labels: Mapping[str, str] | None = None,
                  log: Log = no_log) -> str:
    """Build (once) an image from a Dockerfile and in-memory context; returns its tag.

    The tag is `<prefix>/<name>:<hash>` of the Dockerfile and files, so the same inputs are a
    cache hit. Used by the layers above for env and task images.
    """
    files = dict(files or {})
    digest = context_hash(dockerfile, files)
    tag = f"{get_settings().image_prefix}/{name}:{digest[:16]}"
    if exists(tag):
        return tag
    with build_lock(tag):
        if not exists(tag):
            all_labels = {LABEL_RECIPE: name, LABEL_HASH: digest, LABEL_KIND: kind,
                          **(labels or {})}
            build_tag(tag, dockerfile, files, labels=all_labels, log=log,
                      logname=f"{name.replace('/', '_')}-{digest[:12]}")
    return tag


def build_tag(tag: str, dockerfile: str, files: Mapping[str, bytes], *,
              labels: Mapping[str, str], log: Log = no_log, logname: str = "") -> None:
    """Run one `docker build` of an in-memory context, streaming its log to a file."""
    s = get_settings()
    context = _tar({**files, "Dockerfile": dockerfile.encode()})
    logdir = s.logs_dir / "images"
    logdir.mkdir(parents=True, exist_ok=True)
    logfile = logdir / f"{logname or tag.replace('/', '_').replace(':', '-')}.log"
    log(f"building {tag} (log: {logfile})")
    start = time.monotonic()
    last: list[str] = []
    api = engine.client().api
    with open(logfile, "w", encoding="utf-8") as out:
        try:
            stream = api.build(fileobj=context, custom_context=True, tag=tag, rm=True,
                               forcerm=True, decode=True, labels=dict(labels), pull=False)
            for chunk in stream:
                if "stream" in chunk:
                    text = chunk["stream"]
                    out.write(text)
                    last = (last + text.splitlines())[-40:]
                if "error" in chunk:
                    out.write(chunk["error"] + "\n")
                    tail = next((ln for ln in reversed(last) if ln.strip()), chunk["error"])
                    raise ImageBuildError(
                        f"building {tag} failed: {chunk['error'].strip()[:200]}"
                        f" (last output: {tail.strip()[:200]}; log: {logfile})")
        except APIError as exc:
            raise ImageBuildError(f"building {tag} failed: {exc.explanation}") from exc
    log(f"built {tag} in {time.monotonic() - start:.0f}s")


def _tar(files: Mapping[str, bytes]) -> io.BytesIO:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
    buf.seek(0)
    return buf


def ensure_rootfs(suite: str, *, log: Log = no_log) -> str:
    """The bare Debian root image: pulled where a registry answers, else debootstrapped."""
    s = get_settings()
    tag = rootfs_tag(suite, s.debian_mirror)
    if exists(tag):
        return tag
    with build_lock(tag):
        if exists(tag):
            return tag
        source = s.base_source
        if source not in ("auto", "pull", "debootstrap"):
            raise ImageBuildError(
                f"ENVFACTORY_BASE_SOURCE={source!r}; known: auto, pull, debootstrap")
        if source in ("auto", "pull") and _try_pull(suite, tag, log):
            return tag
        if source == "pull":
            raise ImageBuildError(f"no registry answers for debian:{suite} (base_source=pull)")
        _debootstrap(suite, s.debian_mirror, tag, log)
    return tag


def _try_pull(suite: str, tag: str, log: Log) -> bool:
    c = engine.client()
    try:
        image = c.images.pull("debian", tag=suite)
    except Exception as exc:  # any registry failure means: fall back to debootstrap
        log(f"no registry for debian:{suite} ({str(exc).splitlines()[0][:120]}); "
            "falling back to debootstrap")
        return False
    image.tag(tag)
    log(f"pulled debian:{suite}")
    return True


def _debootstrap(suite: str, mirror: str, tag: str, log: Log) -> None:
    if os.geteuid() != 0:
        raise ImageBuildError("debootstrap needs root (no image registry answers); run as root "
                              "or set ENVFACTORY_BASE_SOURCE=pull with a reachable registry")
    if shutil.which("debootstrap") is None:
        log("installing debootstrap ...")
        proc = subprocess.run([*engine.APT, "install", "-y", "-qq", "debootstrap"],
                              capture_output=True, text=True,
                              env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
        if proc.returncode != 0:
            subprocess.run([*engine.APT, "update", "-qq"], capture_output=True)
            proc = subprocess.run([*engine.APT, "install", "-y", "-qq", "debootstrap"],
                                  capture_output=True, text=True,
                                  env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
        if proc.returncode != 0:
            raise ImageBuildError(f"cannot install debootstrap: {_last_line(proc.stderr)}")
    s = get_settings()
    work = s.home / "tmp"
    work.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=work, prefix=f"rootfs-{suite}-") as tmp:
        root = Path(tmp) / "root"
        log(f"debootstrap {suite} from {mirror} (no image registry answers) ...")
        start = time.monotonic()
        proc = subprocess.run(
            ["debootstrap", "--variant=minbase", suite, str(root), mirror],
            capture_output=True, text=True)
        if proc.returncode != 0:
            log_path = s.logs_dir / f"debootstrap-{suite}.log"
            log_path.parent.mkdir(parents=True, exist_ok=True)
            log_path.write_text(proc.stdout + proc.stderr)
            raise ImageBuildError(
                f"debootstrap {suite} failed: {_last_line(proc.stdout + proc.stderr)} "
                f"(log: {log_path})")
        # Keep the image small and reproducible-ish: no apt lists or caches.
        for junk in ("var/lib/apt/lists", "var/cache/apt/archives"):
            shutil.rmtree(root / junk, ignore_errors=True)
            (root / junk).mkdir(parents=True, exist_ok=True)
        (root / "var/lib/apt/lists/partial").mkdir(parents=True, exist_ok=True)
        archive = Path(tmp) / "rootfs.tar"
        subprocess.run(["tar", "-C", str(root), "--numeric-owner", "-cf", str(archive), "."],
                       check=True)
        repo, _, version = tag.rpartition(":")
        engine.client().api.import_image_from_file(
            str(archive), repository=repo, tag=version,
            changes=["ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                     'CMD ["bash"]'])
        log(f"imported {tag} in {time.monotonic() - start:.0f}s")


def _last_line(text: str) -> str:
    lines = [ln for ln in (text or "").strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else "no output"
