"""Reading one exec's output: docker's multiplexed stream, without blocking, and capped.

`ExecStream` reads the hijacked connection of `exec start` a chunk at a time (never
blocking longer than asked, so the exec loop keeps its deadlines) and splits it into
docker's 8-byte-header frames; `Capped` keeps the head and tail of a stream.
"""

from __future__ import annotations

import contextlib
import io
import os
import select
import struct
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

READ_CHUNK = 1 << 18


class Capped:
    """Keeps the first and last `cap // 2` bytes of a stream; counts what it drops."""

    def __init__(self, cap: int) -> None:
        self.half = max(1, cap // 2)
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_len = 0
        self.total = 0

    def feed(self, data: bytes | memoryview) -> None:
        self.total += len(data)
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        if len(data) >= self.half:
            self.tail.clear()
            self.tail.append(bytes(data[-self.half:]))
            self.tail_len = self.half
            return
        self.tail.append(bytes(data))
        self.tail_len += len(data)
        # Drop whole chunks from the left while the rest still covers the last half-cap bytes.
        while self.tail and self.tail_len - len(self.tail[0]) >= self.half:
            self.tail_len -= len(self.tail.popleft())

    @property
    def truncated(self) -> bool:
        return self.total > len(self.head) + min(self.tail_len, self.half)

    def text(self) -> str:
        tail = b"".join(self.tail)[-self.half:] if self.tail else b""
        head = bytes(self.head)
        dropped = self.total - len(head) - len(tail)
        if dropped <= 0:
            return (head + tail).decode("utf-8", errors="replace")
        marker = f"\n[... envfactory: {dropped} bytes truncated ...]\n"
        return (head.decode("utf-8", errors="replace") + marker
                + tail.decode("utf-8", errors="replace"))


def _http_internals(sock: Any) -> tuple[Any, io.BufferedReader | None]:
    """The HTTP response docker-py's exec socket belongs to, and the buffered reader under it.

    The one place the sandbox reads private attributes, because nothing public reaches
    either: docker-py pins the (requests) response on the socket it returns as `_response`,
    and the reader is `fp` of urllib3's private `_fp` (the http.client response). The
    reader matters: parsing the `101 UPGRADED` header, http.client reads ahead, so the first
    frames of a quick command can already sit in its buffer; reading the socket alone (as
    docker-py's own `frames_iter` does) would lose them, and the output would come back
    short or empty. The response owns the connection: closing only the socket leaves it
    open. Either missing (another transport or docker-py): None.
    """
    response = getattr(sock, "_response", None)
    try:
        return response, response.raw._fp.fp
    except AttributeError:
        return response, None


class ExecStream:
    """Non-blocking reader of one hijacked `exec start` connection (docker's 8-byte frames).

    Reads go through the HTTP response's buffered reader when there is one (see
    `_http_internals`); its socket, reached through urllib3's public `connection`, is made
    non-blocking. (Setting O_NONBLOCK on the file descriptor would not do: the engine
    client's socket has a timeout, so Python waits up to that long before each read.)
    """

    def __init__(self, sock: Any) -> None:
        self._sock = sock
        self._response, self._buffered = _http_internals(sock)
        connection = getattr(getattr(self._response, "raw", None), "connection", None)
        self._raw = getattr(connection, "sock", None) or sock
        try:
            self._raw.settimeout(0)
        except (AttributeError, OSError):
            self._buffered = None
        self._pending = bytearray()

    def _read_once(self) -> bytes | None:
        """Bytes available now (b"" if none); None when the reader cannot be read."""
        try:
            if self._buffered is not None:
                return self._buffered.read1(READ_CHUNK) or b""
            if hasattr(self._raw, "recv"):
                return self._raw.recv(READ_CHUNK)
            return os.read(self._raw.fileno(), READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return b""
        except (OSError, ValueError):
            return None

    def read(self, timeout: float) -> bytes | None:
        """Up to one chunk; b"" when nothing arrived within timeout; None at end of stream."""
        data = self._read_once()
        if data:
            return data
        if data is None:
            return None
        try:
            ready, _, _ = select.select([self._raw], [], [], max(0.0, timeout))
        except (OSError, ValueError):
            return None
        if not ready:
            return b""
        data = self._read_once()
        # Readable but empty: the peer closed the connection.
        return data if data else None

    def frames(self, data: bytes) -> list[tuple[int, bytes]]:
        """Complete frames so far as (stream, payload); a partial frame waits for more."""
        self._pending += data
        buf = self._pending
        out: list[tuple[int, bytes]] = []
        pos = 0
        while len(buf) - pos >= 8:
            (size,) = struct.unpack_from(">I", buf, pos + 4)
            if len(buf) - pos - 8 < size:
                break
            out.append((buf[pos], bytes(buf[pos + 8:pos + 8 + size])))
            pos += 8 + size
        del buf[:pos]
        return out

    def drain_in_background(self, stop: Callable[[], bool]) -> None:
        """Keep reading (and dropping) until the stream ends or `stop()`, then close it.

        Orphans of a finished command (`server &`) can hold the stream open. Hanging up
        on them makes the engine stall the next exec for seconds, and not reading at all
        would block them once the pipe fills; so a daemon thread drains it.
        """

        def drain() -> None:
            try:
                while not stop() and self.read(1.0) is not None:
                    pass
            finally:
                self.close()

        threading.Thread(target=drain, name="envfactory-drain", daemon=True).start()

    def close(self) -> None:
        for thing in (self._sock, self._response):
            with contextlib.suppress(Exception):
                thing.close()
