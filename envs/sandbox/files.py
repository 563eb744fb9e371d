"""Files in and out of a sandbox, through the engine's archive API (no exec needed)."""

from __future__ import annotations

import contextlib
import io
import posixpath
import tarfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from docker.errors import APIError, DockerException, NotFound

from envs.sandbox.container import SandboxBase
from envs.sandbox.errors import SandboxError, is_not_running, short

_MODE_SYMLINK = 1 << 27  # Go's os.ModeSymlink, as the engine reports a path's mode
_MODE_DIR = 1 << 31  # Go's os.ModeDir


class FileOps(SandboxBase):
    """put_file, put_files, put_dir, get_file."""

    def put_file(self, path: str, data: bytes | str, mode: int = 0o644) -> None:
        """Write one file (parent directories are created)."""
        self._put_archive({self._abs(path): (data, mode)})

    def put_files(self, files: Mapping[str, bytes | str]) -> None:
        """Write several files in one archive upload."""
        if files:
            self._put_archive({self._abs(p): (d, 0o644) for p, d in files.items()})

    def _put_archive(self, files: Mapping[str, tuple[bytes | str, int]],
                     dirs: Mapping[str, int] | None = None) -> None:
        self._check_open()
        buf = io.BytesIO()
        now = time.time()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            for path, mode in (dirs or {}).items():
                info = tarfile.TarInfo(path.lstrip("/"))
                info.type, info.mode, info.mtime = tarfile.DIRTYPE, mode, now
                tar.addfile(info)
            for path, (data, mode) in files.items():
                payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
                # No entries for parent directories: the engine creates missing ones, and an
                # entry for an existing one (/tmp) would reset its mode.
                info = tarfile.TarInfo(path.lstrip("/"))
                info.size, info.mode, info.mtime = len(payload), mode, now
                tar.addfile(info, io.BytesIO(payload))
        self._upload(buf.getvalue())

    def _upload(self, archive: bytes) -> None:
        try:
            ok = self._client.api.put_archive(self.id, "/", archive)
        except NotFound as exc:
            raise self._died("before put") from exc
        except APIError as exc:
            if is_not_running(exc):
                raise self._died("before put") from exc
            raise SandboxError(f"cannot write files into the sandbox: {short(exc)}") from exc
        except (DockerException, OSError) as exc:
            raise SandboxError(f"cannot write files into the sandbox: {short(exc)}") from exc
        if not ok:
            raise SandboxError("the engine refused the archive upload")

    def put_dir(self, local_dir: Path | str, dest: str) -> None:
        """Copy a local directory's contents to `dest` (created if missing)."""
        self._check_open()
        src = Path(local_dir)
        if not src.is_dir():
            raise SandboxError(f"{src} is not a directory")
        target = self._abs(dest).lstrip("/")

        def owned_by_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
            # Root in the sandbox has no CAP_DAC_OVERRIDE/CAP_FOWNER: files owned by the
            # host user would be read-only to it.
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            return info

        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            children = sorted(src.iterdir())
            if not children:
                info = owned_by_root(tarfile.TarInfo(target))
                info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, time.time()
                tar.addfile(info)
            for child in children:
                tar.add(str(child), arcname=posixpath.join(target, child.name),
                        filter=owned_by_root)
        self._upload(buf.getvalue())

    def get_file(self, path: str, max_bytes: int | None = None) -> bytes:
        """Read one file. FileNotFoundError if missing, SandboxError if it is a directory
        or larger than max_bytes. Symlinks are followed."""
        self._check_open()
        full = self._abs(path)
        for _ in range(8):
            try:
                stream, stat = self._client.api.get_archive(self.id, full)
            except NotFound as exc:
                if not self.alive():
                    raise self._died("before get") from exc
                raise FileNotFoundError(f"{full}: no such file in sandbox {self.id[:12]}"
                                        ) from exc
            except (DockerException, OSError) as exc:
                raise SandboxError(f"cannot read {full}: {short(exc)}") from exc
            mode = int(stat.get("mode", 0))
            if mode & _MODE_SYMLINK and stat.get("linkTarget"):
                with contextlib.suppress(Exception):
                    stream.close()
                full = self._abs(stat["linkTarget"], posixpath.dirname(full))
                continue
            if mode & _MODE_DIR:
                with contextlib.suppress(Exception):
                    stream.close()
                raise SandboxError(f"{full} is a directory")
            size = int(stat.get("size", 0))
            if max_bytes is not None and size > max_bytes:
                with contextlib.suppress(Exception):
                    stream.close()
                raise SandboxError(f"{full} is {size} bytes, more than max_bytes={max_bytes}")
            return _single_file(full, stream)
        raise SandboxError(f"{path}: too many levels of symbolic links")


def _single_file(full: str, stream: Iterable[bytes]) -> bytes:
    """The one regular file in the tar stream `get_archive` returned."""
    buf = io.BytesIO()
    for chunk in stream:
        buf.write(chunk)
    buf.seek(0)
    with tarfile.open(fileobj=buf, mode="r") as tar:
        member = next((m for m in tar if m.isfile()), None)
        fh = tar.extractfile(member) if member is not None else None
        if fh is None:
            raise SandboxError(f"{full} is not a regular file")
        return fh.read()
