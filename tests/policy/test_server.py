"""The server's token-in-token-out contract, over HTTP against a real server process."""

from __future__ import annotations

import pytest

from policy.cluster import Cluster, http_json
from policy.tito import Trajectory, Turn


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with Cluster(model="tiny", ranks=1, log_dir=tmp_path_factory.mktemp("srv")) as c:
        yield c


def test_a_second_turn_extends_the_generated_ids_byte_for_byte(server):
    msgs = [{"role": "user", "content": "list the files"}]
    a = http_json(server.url + "/v1/chat/completions",
                  {"messages": msgs, "max_tokens": 12, "seed": 3, "rollout_id": "t"})
    t1 = a["choices"][0]["tito"]
    prefix = t1["prompt_ids"] + t1["output_ids"]
    msgs += [a["choices"][0]["message"], {"role": "tool", "content": "a.txt b.txt"}]
    b = http_json(server.url + "/v1/chat/completions",
                  {"messages": msgs, "max_tokens": 12, "seed": 4, "rollout_id": "t",
                   "prefix_ids": prefix})
    t2 = b["choices"][0]["tito"]
    assert t2["prompt_ids"][:len(prefix)] == prefix  # nothing generated was re-tokenized
    assert b["usage"]["prompt_tokens_details"]["cached_tokens"] >= len(prefix) - 1
    traj = Trajectory(task_id="x", rollout_id="t", group="g", reward=0.0, turns=tuple(
        Turn(prompt_ids=tuple(t["prompt_ids"]), output_ids=tuple(t["output_ids"]),
             logprobs=tuple(t["logprobs"]), version=t["version"]) for t in (t1, t2)))
    (seq,) = traj.sequences()  # what the trainer reads: the server's ids, as sent
    assert list(seq.ids) == t2["prompt_ids"] + t2["output_ids"]
    assert sum(seq.loss_mask) == len(t1["output_ids"]) + len(t2["output_ids"])


def test_completions_take_token_ids_and_score_with_echo(server):
    ids = http_json(server.url + "/tokenize", {"text": "hello there"})["ids"]
    gen = http_json(server.url + "/v1/completions",
                    {"prompt": ids, "max_tokens": 5, "temperature": 0})["choices"][0]["tito"]
    scored = http_json(server.url + "/v1/completions",
                       {"prompt": ids + gen["output_ids"], "max_tokens": 0, "echo": True})
    lps = scored["choices"][0]["tito"]["prompt_logprobs"]
    assert lps[0] is None and lps[len(ids):] == pytest.approx(gen["logprobs"], abs=1e-4)


def test_bad_requests_get_a_400_and_a_reason(server):
    with pytest.raises(RuntimeError, match=r"HTTP 400.*messages"):
        http_json(server.url + "/v1/chat/completions", {"messages": []})
    with pytest.raises(RuntimeError, match=r"HTTP 400.*no adapter file"):
        http_json(server.url + "/weights", {"path": "/nonexistent.safetensors"})
