"""The optional LLM drafter: off by default, through an OpenAI-compatible endpoint."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from envs.config import reset_settings_cache
from synth.draft import draft, llm_rephrase, must_keep
from synth.families import get_family


@pytest.fixture()
def llm_server(monkeypatch):
    """A local OpenAI-compatible stand-in answering with `answer[0]`."""
    answer = [""]
    seen: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append({"path": self.path, "body": body})
            data = json.dumps({"choices": [{"message": {"content": answer[0]}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("ENVFACTORY_LLM_URL", f"http://127.0.0.1:{server.server_port}/v1")
    reset_settings_cache()
    yield answer, seen
    server.shutdown()
    reset_settings_cache()


def test_llm_is_off_by_default(monkeypatch):
    monkeypatch.delenv("ENVFACTORY_LLM_URL", raising=False)
    reset_settings_cache()
    assert llm_rephrase("Write /app/x.txt") is None
    assert draft(get_family("dedupe-lines"), 1, use_llm=True).drafter == "template"


def test_llm_rephrasing_that_keeps_every_detail_is_used(llm_server):
    answer, seen = llm_server
    base = draft(get_family("find-large-files"), 5)
    answer[0] = "Please, as asked: " + base.instruction.strip()
    d = draft(get_family("find-large-files"), 5, use_llm=True)
    assert d.drafter == "llm" and d.instruction.startswith("Please, as asked")
    assert seen[0]["path"] == "/v1/chat/completions"
    assert d.fingerprint == base.fingerprint  # same task, other words


def test_llm_rephrasing_that_drops_a_path_is_rejected(llm_server):
    answer, _ = llm_server
    answer[0] = "List the big files somewhere."
    d = draft(get_family("find-large-files"), 5, use_llm=True)
    assert d.drafter == "template"


def test_must_keep_finds_paths_numbers_and_code():
    assert {"/app/a.txt", "42", "`x y`"} <= must_keep("Put `x y` in /app/a.txt, 42 times")
