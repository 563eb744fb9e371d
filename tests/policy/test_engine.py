"""Batched generation and the prefix cache give what one request alone would."""

from __future__ import annotations

import pytest

from policy.engine import Engine, GenRequest


def greedy(ids, n=10):
    return GenRequest(prompt_ids=tuple(ids), max_tokens=n, temperature=0.0)


def test_a_batch_answers_each_request_as_it_would_alone(tiny):
    tok = tiny.tokenizer
    a = tok.encode("hello world, this is a test", add_special_tokens=False)
    b = tok.encode("a longer prompt that pads the other one in the batch", add_special_tokens=False)
    alone = [Engine(tiny).generate([greedy(p)])[0] for p in (a, b)]
    together = Engine(tiny).generate([greedy(a), greedy(b)])
    for x, y in zip(alone, together, strict=True):
        assert x.output_ids == y.output_ids
        assert x.logprobs == pytest.approx(y.logprobs, abs=1e-4)


def test_a_prefix_hit_reuses_kv_and_changes_nothing(tiny):
    tok = tiny.tokenizer
    first = tok.encode("turn one of a conversation", add_special_tokens=False)
    eng = Engine(tiny)
    r1 = eng.generate([greedy(first)])[0]
    second = tuple(first) + r1.output_ids + tuple(tok.encode(" then more", add_special_tokens=False))
    cold = Engine(tiny).generate([greedy(second)])[0]
    warm = eng.generate([greedy(second)])[0]
    assert cold.cached_tokens == 0
    assert warm.cached_tokens == len(first) + len(r1.output_ids) - 1
    assert warm.output_ids == cold.output_ids
    assert warm.logprobs == pytest.approx(cold.logprobs, abs=1e-4)
    assert eng.stats.as_dict()["prefix_hit_rate"] > 0


def test_sampling_is_seeded_and_logprobs_match_a_scoring_pass(tiny):
    ids = tuple(tiny.tokenizer.encode("sample something", add_special_tokens=False))
    req = GenRequest(prompt_ids=ids, max_tokens=8, temperature=1.0, seed=7)
    eng = Engine(tiny)
    r1, r2 = eng.generate([req])[0], Engine(tiny).generate([req])[0]
    assert r1.output_ids == r2.output_ids
    scored = eng.score(ids + r1.output_ids)[len(ids) - 1:]
    assert scored == pytest.approx(list(r1.logprobs), abs=1e-4)  # TITO log-probs are real


def test_a_batch_that_stops_at_its_first_token_caches_each_row_whole(tiny):
    tok = tiny.tokenizer
    short = tuple(tok.encode("short one", add_special_tokens=False))
    long = tuple(tok.encode("a much longer prompt than the short one", add_special_tokens=False))
    eng = Engine(tiny)
    eng.generate([GenRequest(short, max_tokens=1, temperature=0),
                  GenRequest(long, max_tokens=1, temperature=0)])
    for ids in (short, long):
        probe = (*ids, 42)
        hit, kv = eng.prefix.lookup(probe)
        assert hit == len(ids) and kv[0][0].shape[2] == len(ids)  # unpadded, not truncated
        warm = eng.generate([greedy(probe, 4)])[0]
        cold = Engine(tiny).generate([greedy(probe, 4)])[0]
        assert warm.output_ids == cold.output_ids
        assert warm.logprobs == pytest.approx(cold.logprobs, abs=1e-4)
