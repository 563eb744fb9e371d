"""Mirrors with holes: a history naming blobs its object store lacks is found out, recovered
from a release archive that carries the same bytes (checked by the blob id), and whatever
cannot be recovered checks out as an empty file instead of failing the checkout."""

from __future__ import annotations

import http.server
import io
import json
import os
import subprocess
import tarfile
import threading
from pathlib import Path

import pytest

from repolaunch import mirror
from repolaunch.sources import checkout_copy

DATA = b"\x00big data file\n" * 1000


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_COMMITTER_DATE": "2021-01-01T00:00:00Z"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True, env=env).stdout.strip()


@pytest.fixture()
def holed(tmp_path: Path) -> tuple[Path, str, str]:
    """A bare mirror of a project whose data file's blob is gone; (mirror, commit, blob)."""
    src = tmp_path / "src"
    src.mkdir()
    git(src, "init", "-q")
    (src / "pkg").mkdir()
    (src / "pkg" / "data.bin").write_bytes(DATA)
    (src / "setup.py").write_text("from setuptools import setup\nsetup(name='holed')\n")
    git(src, "add", "-A")
    git(src, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "data",
        "--date=2021-01-01T00:00:00Z")
    commit = git(src, "rev-parse", "HEAD")
    blob = git(src, "rev-parse", "HEAD:pkg/data.bin")
    bare = tmp_path / "holed.git"
    git(tmp_path, "clone", "-q", "--bare", str(src), str(bare))
    (bare / "objects" / blob[:2] / blob[2:]).unlink()
    return bare, commit, blob


def test_missing_blobs_are_found_with_their_paths(holed):
    bare, _, blob = holed
    assert mirror.missing_blobs(bare) == {blob: {"pkg/data.bin"}}
    assert mirror.blob_id(DATA) == blob
    assert mirror.project_name(bare) == "holed"


def test_a_checkout_stands_in_an_empty_file(holed, tmp_path):
    bare, commit, _ = holed
    lines: list[str] = []
    dest = checkout_copy(bare, commit, tmp_path / "co", log=lines.append)
    assert (dest / "pkg" / "data.bin").read_bytes() == b""
    assert (dest / "setup.py").is_file()
    assert any("lacks 1 blob" in line for line in lines)


def _serve(routes: dict[str, bytes]) -> tuple[http.server.HTTPServer, str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = routes.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}"


def _sdist(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_recovered_from_a_release_that_carries_the_same_bytes(holed, tmp_path, monkeypatch):
    bare, commit, blob = holed
    index = {"releases": {
        "0.9": [{"packagetype": "sdist", "filename": "holed-0.9.tar.gz",
                 "upload_time_iso_8601": "2020-06-01T00:00:00Z", "url": "/files/old.tar.gz"}],
        "1.0": [{"packagetype": "sdist", "filename": "holed-1.0.tar.gz",
                 "upload_time_iso_8601": "2021-02-01T00:00:00Z",
                 # a relative link, as a mirror of the index answers
                 "url": "../../files/new.tar.gz"}]}}
    server, base = _serve({
        "/pypi/holed/json": json.dumps(index).encode(),
        "/files/new.tar.gz": _sdist({"holed-1.0/pkg/data.bin": DATA,
                                     "holed-1.0/pkg/other.bin": b"other"}),
        "/files/old.tar.gz": _sdist({"holed-0.9/pkg/data.bin": b"an older version"}),
    })
    monkeypatch.setattr(mirror, "PYPI", f"{base}/pypi")
    lines: list[str] = []
    try:
        got = mirror.recover_from_pypi(bare, mirror.missing_blobs(bare), log=lines.append)
    finally:
        server.shutdown()
    assert got == {blob}
    assert mirror.missing_blobs(bare) == {}
    assert any("holed-1.0.tar.gz" in line for line in lines)
    dest = checkout_copy(bare, commit, tmp_path / "co")
    assert (dest / "pkg" / "data.bin").read_bytes() == DATA


def test_no_index_recovers_nothing_and_says_why(holed, monkeypatch):
    bare, _, _ = holed
    monkeypatch.setattr(mirror, "PYPI", "http://127.0.0.1:9/pypi")
    lines: list[str] = []
    assert mirror.recover_from_pypi(bare, mirror.missing_blobs(bare), log=lines.append) == set()
    assert lines and lines[0].startswith("cannot list the releases of holed")
