"""Saving and rolling back a sandbox: snapshot/restore (the whole container as an image,
or a few paths as a tar inside it), commit to a permanent image, disk usage."""

from __future__ import annotations

import contextlib
import json
import logging
import shlex
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from docker.errors import DockerException, NotFound

from envs.config import get_settings
from envs.sandbox.container import INTERNAL_DIR
from envs.sandbox.errors import SandboxError, first_error, short
from envs.sandbox.execution import ExecOps
from envs.sandbox.labels import CREATED_LABEL, SNAPSHOT_OF_LABEL, owned

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Snapshot:
    kind: str  # "image" (docker commit) or "fs" (tar of paths inside the container)
    ref: str  # image id, or path of the tar inside the container
    paths: tuple[str, ...] = ()


class SnapshotOps(ExecOps):
    """snapshot, restore, commit, disk_usage."""

    _snap_seq = 0  # numbers this sandbox's snapshots (tags, tar names)

    def _next_seq(self) -> int:
        with self._lock:
            self._snap_seq += 1
            return self._snap_seq

    def snapshot(self, paths: Sequence[str] | None = None) -> Snapshot:
        """paths=None: commit the whole container to a labelled image (removed on close).
        paths given: tar those paths inside the container (cheap)."""
        self._check_open()
        if paths is None:
            return self._snapshot_image()
        abs_paths = tuple(dict.fromkeys(self._abs(p) for p in paths))
        if not abs_paths:
            raise SandboxError("snapshot needs at least one path")
        if "/" in abs_paths:
            raise SandboxError("cannot take a path snapshot of / (use snapshot() for that)")
        store = next((d for d in (INTERNAL_DIR, "/var/tmp/.envfactory", "/.envfactory")
                      if not any(d == p or d.startswith(p + "/") for p in abs_paths)), None)
        if store is None:
            raise SandboxError("the snapshot paths cover every place a snapshot can be kept")
        ref = f"{store}/snap-{self._next_seq()}-{uuid.uuid4().hex[:8]}.tar"
        quoted = " ".join(shlex.quote(p.lstrip("/")) for p in abs_paths)
        # Paths missing now are left out of the tar; restore removes them again.
        script = (f"set -e; mkdir -p {shlex.quote(store)}; cd /; set --; "
                  f"for p in {quoted}; do if [ -e \"$p\" ] || [ -L \"$p\" ]; then "
                  f"set -- \"$@\" \"$p\"; fi; done; "
                  f"tar -cpf {shlex.quote(ref)} --numeric-owner --files-from /dev/null \"$@\"")
        res = self._sh(script, "snapshot", workdir="/")
        if res.exit_code != 0:
            raise SandboxError(f"snapshot failed: {first_error(res.output)}")
        return Snapshot("fs", ref, abs_paths)

    def _snapshot_image(self) -> Snapshot:
        repo = f"{get_settings().image_prefix}-snapshot"
        tag = f"{self.id[:12]}-{self._next_seq()}"
        labels = owned("snapshot", {SNAPSHOT_OF_LABEL: self.id})
        try:
            res = self._client.api.commit(self.id, repository=repo, tag=tag, pause=True,
                                          conf={"Labels": labels})
        except NotFound as exc:
            raise self._died("before snapshot") from exc
        except (DockerException, OSError) as exc:
            raise SandboxError(f"snapshot (docker commit) failed: {short(exc)}") from exc
        image_id = str(res["Id"])
        self._state.images.append(image_id)  # removed with the sandbox
        return Snapshot("image", image_id, ())

    def restore(self, snap: Snapshot) -> None:
        """Roll back to a snapshot. image: the container is replaced by a new one from the
        snapshot image, with the same configuration (its id changes); fs: the paths are
        wiped and untarred."""
        self._check_open()
        if snap.kind == "fs":
            quoted = " ".join(shlex.quote(p) for p in snap.paths)
            ref = shlex.quote(snap.ref)
            script = (f"set -e; test -f {ref} || {{ echo 'snapshot file {snap.ref} is gone'"
                      f" >&2; exit 3; }}; rm -rf {quoted}; tar -xpf {ref} -C / --numeric-owner")
            res = self._sh(script, "restore", workdir="/")
            if res.exit_code != 0:
                raise SandboxError(f"restore failed: {first_error(res.output)}")
            return
        if snap.kind != "image":
            raise SandboxError(f"unknown snapshot kind {snap.kind!r}")
        api = self._client.api
        old = self.id
        kwargs = dict(self._create_kwargs)
        labels = dict(kwargs["labels"])
        labels[CREATED_LABEL] = str(int(time.time()))
        kwargs["labels"] = labels
        name = kwargs.get("name")
        if name:  # free the name for the replacement
            with contextlib.suppress(DockerException, OSError):
                api.rename(old, f"{name}-old-{uuid.uuid4().hex[:6]}")
        try:
            new = self._create(self._client, snap.ref, kwargs)
        except SandboxError:
            if name:  # the old container carries on as before
                with contextlib.suppress(DockerException, OSError):
                    api.rename(old, name)
            raise
        with self._lock:
            self._state.container_id = new
            self._oom_seen = 0  # a new container, a new memory cgroup
        with contextlib.suppress(NotFound):
            try:
                api.remove_container(old, force=True, v=True)
            except (DockerException, OSError) as exc:
                log.warning("could not remove replaced container %s: %s", old[:12], short(exc))

    def commit(self, tag: str, *, labels: Mapping[str, str] | None = None,
               changes: Sequence[str] = ()) -> str:
        """Commit the container to a permanent image `tag` (an env image); returns its id.

        Unlike snapshot(), the image is not removed on close and carries only the given
        labels (the sandbox's own labels would make gc() treat it as a leftover).
        """
        self._check_open()
        repo, _, version = tag.rpartition(":")
        if not repo or "/" in version:
            raise SandboxError(f"commit needs a repository:tag, got {tag!r}")
        conf: dict[str, Any] = {"Labels": {k: v for k, v in (labels or {}).items()}}
        if changes:
            conf.update(_parse_changes(changes))
        try:
            res = self._client.api.commit(self.id, repository=repo, tag=version, pause=True,
                                          conf=conf)
        except NotFound as exc:
            raise self._died("before commit") from exc
        except (DockerException, OSError) as exc:
            raise SandboxError(f"docker commit failed: {short(exc)}") from exc
        return str(res["Id"])

    def disk_usage(self) -> int:
        """Bytes this container added on top of its image (its writable layer)."""
        self._check_open()
        rows = self._client.api.containers(all=True, size=True, filters={"id": self.id})
        if not rows:
            raise self._died("before disk_usage")
        return int(rows[0].get("SizeRw") or 0)


def _parse_changes(changes: Sequence[str]) -> dict[str, Any]:
    """The few Dockerfile-style changes an env image needs: ENV K=V, WORKDIR, CMD [...]."""
    conf: dict[str, Any] = {}
    for change in changes:
        word, _, rest = change.strip().partition(" ")
        word = word.upper()
        if word == "ENV":
            conf.setdefault("Env", []).append(rest.strip())
        elif word == "WORKDIR":
            conf["WorkingDir"] = rest.strip()
        elif word == "CMD":
            conf["Cmd"] = json.loads(rest)
        else:
            raise SandboxError(f"unsupported image change {change!r} (ENV, WORKDIR, CMD)")
    return conf
