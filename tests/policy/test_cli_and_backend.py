"""The policy's CLI fails in one line; synth uses the policy server as its LLM backend."""

from __future__ import annotations

import subprocess
import sys

from envs.config import reset_settings_cache
from policy.cluster import Cluster


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "envfactory.cli", "policy", *args],
                          capture_output=True, text=True, timeout=300)


def test_unknown_recipe_and_bad_adapter_are_one_line_errors(tmp_path):
    r = run_cli("train", "--recipe", "nope", "--out", str(tmp_path))
    assert r.returncode == 2
    assert r.stderr.strip() == "error: unknown recipe 'nope'; known: bundled, ci"
    r = run_cli("eval", "--adapter", str(tmp_path / "missing.safetensors"))
    assert r.returncode == 2 and "expected NAME=PATH" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = run_cli("train", "--recipe", "ci", "--sft-adapter", str(tmp_path / "sft.safetensors"),
                "--out", str(tmp_path))
    assert r.returncode == 2 and "no file at" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not any(tmp_path.iterdir())


def test_synth_drafts_through_the_policy_server(monkeypatch, tmp_path):
    from synth.draft import llm_rephrase

    with Cluster(model="tiny", ranks=1, log_dir=tmp_path) as c:
        monkeypatch.setenv("ENVFACTORY_LLM_URL", c.url + "/v1")
        monkeypatch.setenv("ENVFACTORY_LLM_MODEL", "tiny")
        reset_settings_cache()
        try:
            answer = llm_rephrase("Count the lines of /app/data.txt into /app/out.txt.\n")
        finally:
            reset_settings_cache()
        served = c.stats()["ranks"][0]
    assert served["requests"] == 1 and served["output_tokens"] > 0
    # a random tiny model cannot keep the paths: synth keeps its template, as it should
    assert answer is None


def test_the_ci_recipe_trains_an_adapter_and_evaluates_it_against_the_base(tmp_path, base_image):
    import json

    from safetensors.torch import load_file

    out = tmp_path / "policy"
    r = subprocess.run([sys.executable, "-m", "envfactory.cli", "policy", "train", "--recipe",
                        "ci", "--mode", "async", "--out", str(out), "--json"],
                       capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stderr[-2000:]
    summary = json.loads(r.stdout)
    assert summary["mode"] == "async" and summary["rl_steps"] == 1
    # SFT and RL each wrote a LoRA adapter of the model, and RL moved it
    sft, final = load_file(out / "adapter-sft.safetensors"), load_file(out / "adapter.safetensors")
    assert sft.keys() == final.keys() and any("lora_" in k for k in sft)
    assert any(bool((sft[k] != final[k]).any()) for k in sft)
    assert json.loads((out / "train.json").read_text())["adapter"] == str(out / "adapter.safetensors")

    # RL again from that SFT adapter: SFT is not rerun, its adapter is carried over as it was
    again = tmp_path / "again"
    r = subprocess.run([sys.executable, "-m", "envfactory.cli", "policy", "train", "--recipe",
                        "ci", "--sft-adapter", str(out / "adapter-sft.safetensors"), "--out",
                        str(again), "--json"], capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout)["sft_run"] is False and "sft 1/" not in r.stderr
    assert (again / "adapter-sft.safetensors").read_bytes() == (
        out / "adapter-sft.safetensors").read_bytes()
    resumed = load_file(again / "adapter.safetensors")
    assert any(bool((sft[k] != resumed[k]).any()) for k in sft)

    r = subprocess.run([sys.executable, "-m", "envfactory.cli", "policy", "eval", "--recipe",
                        "ci", "--adapter", f"ci={out / 'adapter.safetensors'}", "--json"],
                       capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stderr[-2000:]
    result = json.loads(r.stdout)
    assert list(result["table"]) == ["base", "ci"]
    # two held-out tasks per split; every rollout graded (no infrastructure failure)
    for row in result["table"].values():
        assert row["n"] == 4 and row["solved"] == len(row["solved_tasks"])
        assert sum(row["solved_by_split"].values()) == row["solved"]
