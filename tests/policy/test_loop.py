"""End to end on the `tiny` model, all real processes: two servers behind the router, a
rollout of a synthesized terminal task in Docker, one RL step, a weight push, and the
servers answering with the new version."""

from __future__ import annotations

import asyncio

import pytest

from policy.cluster import Cluster, http_json
from policy.rollout import reference_rollout, rollout_groups
from policy.train import Learner, RLConfig
from synth.draft import draft
from synth.families import get_family
from synth.implement import implement


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with Cluster(model="tiny", ranks=2, log_dir=tmp_path_factory.mktemp("policy")) as c:
        yield c


@pytest.fixture(scope="module")
def task(base_image):
    return implement(draft(get_family("dedupe-lines"), 7, task_id="policy-dedupe"))


def test_serve_route_rollout_train_push(cluster, task, tiny, tmp_path):
    cfg = RLConfig(group_size=2, max_turns=2, max_tokens=48, min_valid=2, tau=0)

    async def gather():
        groups = await rollout_groups([task], base_url=cluster.url, group_size=2,
                                      max_turns=cfg.max_turns, max_tokens=cfg.max_tokens)
        ref = await reference_rollout(task, base_url=cluster.url, rollout_id="ref",
                                      group=groups[0][0].group)
        return groups[0], ref

    sampled, ref = asyncio.run(gather())
    # the random tiny model does not solve the task; the oracle does; none is infrastructure
    assert [t.reward for t in sampled] == [0.0, 0.0]
    assert ref.reward == 1.0
    for t in sampled:
        assert t.turns and all(turn.version == 0 for turn in t.turns)

    stats = cluster.stats()
    assert stats["routing"] == "affine"
    # every request went through the router to a rank (prefix hits: test_server.py)
    assert sum(r["routed"] for r in stats["ranks"]) >= 5  # 2 samples, 3 reference calls

    learner = Learner(tiny, lr=1e-3, out_dir=tmp_path, temperature=1.0)
    # TITO: the trainer's log-probs of the server's ids under the same weights agree with
    # the server's own, token for token (one shifted or re-tokenized id would not)
    for t in [*sampled, ref]:
        for seq in t.sequences():
            logp, pos = learner._logprobs(seq)
            old = [seq.logprobs[i] for i in pos.tolist()]
            assert logp.tolist() == pytest.approx(old, abs=2e-3)

    before = tiny.adapter_state()
    out = learner.rl_step([[*sampled, ref]], cfg)
    assert out["kept"] == 1 and out["masked_frac"] == 0.0 and out["tokens"] > 0
    assert out["sampled_reward"] == 0.0 and out["infrastructure"] == 0
    after = tiny.adapter_state()
    assert any(bool((before[k] != v).any()) for k, v in after.items())  # the step moved it
    adapter = learner.publish()
    assert cluster.push(adapter, learner.version) == [1, 1]

    answer = http_json(cluster.url + "/v1/chat/completions", {
        "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4, "rollout_id": "z"})
    assert answer["choices"][0]["tito"]["version"] == 1
    for rank in cluster.stats()["ranks"]:
        assert rank["version"] == 1 and rank["weight_loads"] == 1


def test_async_mode_streams_groups_while_the_learner_trains(cluster, task, tiny, tmp_path):
    from policy.train import run_rl

    learner = Learner(tiny, lr=1e-3, out_dir=tmp_path)
    cfg = RLConfig(group_size=2, max_turns=1, max_tokens=24, min_valid=2, tau=1, references=1)
    logs = run_rl(learner, [task], push=cluster.push, base_url=cluster.url, cfg=cfg, steps=3,
                  mode="async", tasks_per_step=1)
    assert [e.version for e in logs] == [1, 2, 3]
    # every group started was trained on once: three groups of two samples and the oracle
    assert [e.trajectories for e in logs] == [3, 3, 3]
    # each group: two sampled failures and the oracle; none too stale at tau = 1
    assert all(e.stats["kept"] == 1 and not e.stats["dropped"] for e in logs)
    assert all(0.0 <= e.stats["masked_frac"] <= 1.0 for e in logs)
    assert (tmp_path / "adapter-v2.safetensors").is_file()


def test_a_learner_that_fails_stops_the_rollout_worker_and_leaves_no_container(
        cluster, task, tiny, tmp_path):
    import threading

    from envs.engine import client
    from envs.sandbox.labels import LABEL, OWNER_LABEL, owner
    from policy.train import run_rl

    def mine() -> set[str]:
        return {c["Id"] for c in client().api.containers(all=True, filters={"label": LABEL})
                if c["Labels"].get(OWNER_LABEL) == owner()}

    def push(path, version):
        raise RuntimeError("the servers refused the weights")

    learner = Learner(tiny, lr=1e-3, out_dir=tmp_path)
    cfg = RLConfig(group_size=2, max_turns=1, max_tokens=24, min_valid=2, tau=1, references=1)
    with pytest.raises(RuntimeError, match="refused the weights"):
        run_rl(learner, [task], push=push, base_url=cluster.url, cfg=cfg, steps=3,
               mode="async", tasks_per_step=1)
    assert not any(t.name == "rollout-worker" for t in threading.enumerate())
    assert mine() == set()
