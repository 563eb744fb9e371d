"""`policy.cluster.http_json` over httpx: JSON in and out, one-line errors of the kinds its
callers catch (RuntimeError for an error answer, OSError for none)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from policy.cluster import free_port, http_json


@pytest.fixture()
def server():
    class Handler(BaseHTTPRequestHandler):
        def _answer(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path == "/slow":
                time.sleep(1.5)
            self._answer(200, json.dumps({"method": "GET"}).encode())

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if body.get("fail"):
                self._answer(503, b"overloaded, retry later")
            else:
                self._answer(200, json.dumps({"method": "POST", "echo": body}).encode())

        def log_message(self, *args):
            pass

    srv = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_port}"
    srv.shutdown()


def test_get_post_and_the_errors(server):
    assert http_json(server + "/x") == {"method": "GET"}
    assert http_json(server + "/x", {"a": 1}) == {"method": "POST", "echo": {"a": 1}}
    with pytest.raises(RuntimeError, match=r"^http://.*/x: HTTP 503: overloaded"):
        http_json(server + "/x", {"fail": True})
    with pytest.raises(TimeoutError, match=r"no answer within 0\.5s") as slow:
        http_json(server + "/slow", timeout=0.5)
    refused = f"http://127.0.0.1:{free_port()}/health"
    with pytest.raises(ConnectionError) as gone:
        http_json(refused, timeout=2)
    for exc in (slow.value, gone.value):
        assert isinstance(exc, OSError) and "\n" not in str(exc)  # what Cluster._wait catches
