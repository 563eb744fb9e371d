"""Stage 1, draft: a family + seeded parameters + an instruction in one of several phrasings.

The template drafter is deterministic (seeded RNG). An optional LLM drafter rephrases the
chosen template through any OpenAI-compatible endpoint (`ENVFACTORY_LLM_URL`, off by
default); its answer is kept only if it still carries every concrete token of the
template (paths, numbers, quoted names), so the task stays checkable and the tests still
match what the agent is told. It never sees the solution, so it cannot leak it.
"""

from __future__ import annotations

import hashlib
import json
import random
import re

import httpx

from envs.config import get_settings
from synth.families import Family
from synth.spec import TaskDraft, fingerprint


class DraftError(RuntimeError):
    """A draft could not be made; one line."""


def task_seed(seed: int, family: str, index: int, attempt: int = 0) -> int:
    h = hashlib.sha256(f"{seed}:{family}:{index}:{attempt}".encode()).hexdigest()
    return int(h[:12], 16)


def task_id_for(family: str, seed: int, index: int) -> str:
    return f"{family}-{hashlib.sha256(f'{seed}:{family}:{index}'.encode()).hexdigest()[:10]}"


def draft(fam: Family, seed: int, *, task_id: str | None = None, use_llm: bool = False
          ) -> TaskDraft:
    """Sample parameters and phrase the instruction (deterministic in `seed`)."""
    rng = random.Random(seed)
    try:
        params = fam.sample(rng)
        options = fam.phrasings(params)
    except Exception as exc:  # a family bug is a draft failure, recorded, not a crash
        raise DraftError(f"{fam.name}: cannot draft: {type(exc).__name__}: {exc}") from exc
    if not options:
        raise DraftError(f"{fam.name}: no phrasings")
    instruction = rng.choice(options).strip() + "\n"
    drafter = "template"
    if use_llm:
        rephrased = llm_rephrase(instruction)
        if rephrased is not None:
            instruction, drafter = rephrased, "llm"
    return TaskDraft(
        task_id=task_id or f"{fam.name}-{seed:x}", family=fam.name, category=fam.category,
        difficulty=fam.difficulty, seed=seed, params=json.loads(json.dumps(params)),
        instruction=instruction, drafter=drafter, fingerprint=fingerprint(fam.name, params))


_TOKENS = re.compile(r"(/[\w./-]+|`[^`]+`|\"[^\"]+\"|'[^']+'|\b\d+(?:\.\d+)?\b)")


def must_keep(text: str) -> set[str]:
    """The concrete tokens an instruction may not lose: paths, code spans, quotes, numbers."""
    return {m.group(0) for m in _TOKENS.finditer(text)}


def llm_rephrase(instruction: str, *, timeout: float = 30.0) -> str | None:
    """Ask the configured endpoint for a rephrasing; None when off, failing or lossy."""
    s = get_settings()
    if not s.llm_url:
        return None
    url = s.llm_url.rstrip("/")
    if not url.endswith("/chat/completions"):
        url += "/chat/completions"
    body = {
        "model": s.llm_model,
        "temperature": 0.7,
        "messages": [
            {"role": "system", "content": (
                "Rephrase the task for a terminal agent. Keep every path, number, name and "
                "code span exactly. Do not add hints or steps. Answer with the task only.")},
            {"role": "user", "content": instruction},
        ],
    }
    headers = {"Authorization": f"Bearer {s.llm_api_key}"} if s.llm_api_key else {}
    try:
        resp = httpx.post(url, json=body, headers=headers, timeout=timeout)
        resp.raise_for_status()
        answer = resp.json()["choices"][0]["message"]["content"]
    except (httpx.HTTPError, httpx.InvalidURL, OSError, ValueError, KeyError, IndexError,
            TypeError):
        return None
    answer = str(answer).strip()
    if not answer or not must_keep(instruction) <= must_keep(answer):
        return None  # it dropped or changed a concrete detail: keep the template
    return answer + "\n"
