"""Start N policy server processes and a router in front of them, as real processes.

    with Cluster(model="tiny", ranks=2) as c:
        c.url        # the router: an OpenAI-compatible base URL (append /v1)

Each process's output goes to a log file under `log_dir`; a process that dies before it
answers `/health` fails the start with the tail of its log.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def http_json(url: str, body: dict[str, Any] | None = None, *, timeout: float = 600) -> Any:
    """GET (no body) or POST JSON; the parsed answer. An error answer raises RuntimeError
    with the server's text; no answer raises OSError (ConnectionError, TimeoutError), one
    line each."""
    try:
        resp = httpx.request("GET" if body is None else "POST", url, json=body,
                             timeout=timeout, follow_redirects=True)
    except httpx.TimeoutException:
        raise TimeoutError(f"{url}: no answer within {timeout:g}s") from None
    except httpx.TransportError as e:
        why = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise ConnectionError(f"{url}: {why}") from None
    if resp.is_error:
        raise RuntimeError(f"{url}: HTTP {resp.status_code}: {resp.text[:300]}")
    return resp.json()


class Cluster:
    """N servers (`policy.server`) and one router (`policy.router`) on free local ports."""

    def __init__(self, *, model: str = "tiny", ranks: int = 2, routing: str = "affine",
                 adapter: Path | None = None, device: str = "cpu", threads: int = 1,
                 max_batch: int = 8, log_dir: Path | None = None,
                 start_timeout: float = 300.0, seed: int = 0) -> None:
        self.model, self.ranks, self.routing = model, ranks, routing
        self.adapter, self.device, self.threads, self.max_batch = adapter, device, threads, \
            max_batch
        self.log_dir = log_dir or Path(tempfile.mkdtemp(prefix="envfactory-policy-"))
        self.start_timeout = start_timeout
        self.seed = seed  # the learner's: tiny's base weights must be the same on both sides
        self.procs: list[tuple[subprocess.Popen[bytes], Path, str]] = []
        self.upstreams: list[str] = []
        self.url = ""

    def _spawn(self, name: str, args: list[str], port: int) -> str:
        log = self.log_dir / f"{name}.log"
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        with log.open("wb") as fh:  # the child keeps its own descriptor
            proc = subprocess.Popen([sys.executable, *args, "--port", str(port)], stdout=fh,
                                    stderr=subprocess.STDOUT, env=env, start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        self.procs.append((proc, log, url))
        return url

    def _wait(self, url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                tail = log.read_text(errors="replace")[-1500:]
                raise RuntimeError(f"{log.stem} exited ({proc.returncode}) before serving:\n{tail}")
            try:
                http_json(url + "/health", timeout=2)
                return
            except (OSError, RuntimeError):
                time.sleep(0.3)
        raise RuntimeError(f"{log.stem} did not answer within {self.start_timeout:.0f}s ({log})")

    def start(self) -> Cluster:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        for r in range(self.ranks):
            args = ["-m", "policy.server", "--model", self.model, "--rank", str(r),
                    "--device", self.device, "--threads", str(self.threads),
                    "--max-batch", str(self.max_batch), "--seed", str(self.seed)]
            if self.adapter:
                args += ["--adapter", str(self.adapter)]
            self.upstreams.append(self._spawn(f"server-{r}", args, free_port()))
        router_args = ["-m", "policy.router", "--routing", self.routing]
        for u in self.upstreams:
            router_args += ["--upstream", u]
        self.url = self._spawn("router", router_args, free_port())
        for proc, log, url in self.procs:
            self._wait(url, proc, log)
        return self

    def stats(self) -> dict[str, Any]:
        return http_json(self.url + "/stats")

    def push(self, adapter: Path, version: int) -> list[int]:
        return http_json(self.url + "/weights", {"path": str(adapter), "version": version})[
            "versions"]

    def close(self) -> None:
        for proc, _, _ in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc, _, _ in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.procs.clear()

    def __enter__(self) -> Cluster:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc: object) -> None:
        self.close()
