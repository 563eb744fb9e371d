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
    """A local OpenAI-compatible stand-in answering with `answer[0]`, status `answer[1]`."""
    answer: list = ["", 200]  # the content, the HTTP status
    seen: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append({"path": self.path, "body": body,
                         "auth": self.headers.get("Authorization"),
                         "type": self.headers.get("Content-Type")})
            data = json.dumps({"choices": [{"message": {"content": answer[0]}}]}).encode()
            self.send_response(answer[1])
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


def test_llm_call_sends_the_key_and_any_failure_keeps_the_template(llm_server, monkeypatch):
    """Over httpx: JSON with the bearer key when one is set; an error answer, no answer or
    an unreadable one is None (the template stays), never an exception."""
    answer, seen = llm_server
    instruction = "Count the lines of /app/data.txt.\n"
    answer[0] = "Please count the lines of /app/data.txt."
    monkeypatch.setenv("ENVFACTORY_LLM_API_KEY", "sk-test")
    reset_settings_cache()
    assert llm_rephrase(instruction) == answer[0] + "\n"
    assert seen[-1]["auth"] == "Bearer sk-test" and seen[-1]["type"] == "application/json"
    assert seen[-1]["body"]["messages"][-1]["content"] == instruction
    answer[1] = 500
    assert llm_rephrase(instruction) is None
    monkeypatch.setenv("ENVFACTORY_LLM_URL", "http://127.0.0.1:9/v1")  # nothing listens
    reset_settings_cache()
    assert llm_rephrase(instruction, timeout=5) is None
    monkeypatch.setenv("ENVFACTORY_LLM_URL", "not a url")
    reset_settings_cache()
    assert llm_rephrase(instruction) is None


def test_llm_rephrasing_that_drops_a_path_is_rejected(llm_server):
    answer, _ = llm_server
    answer[0] = "List the big files somewhere."
    d = draft(get_family("find-large-files"), 5, use_llm=True)
    assert d.drafter == "template"


def test_must_keep_finds_paths_numbers_and_code():
    assert {"/app/a.txt", "42", "`x y`"} <= must_keep("Put `x y` in /app/a.txt, 42 times")
