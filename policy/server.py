"""An OpenAI-compatible, token-in-token-out (TITO) server of the bundled policy.

`/v1/chat/completions` (with tools) and `/v1/completions` answer as OpenAI's API does, and
each choice also carries `tito`: the prompt's token ids, the generated ids, their per-token
log-probs and the weight version that generated them, so a trainer never re-tokenizes.
A chat request may send `prefix_ids` (the previous turn's prompt ids + output ids): the
server then appends only the new messages' tokens, and the multi-turn prompt stays exactly
what was generated. `POST /weights` loads a new adapter between two batches; `GET /stats`
reports load, batch sizes, the prefix-cache hit rate and tokens per second.

    python -m policy.server --model tiny --port 8100
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from pathlib import Path
from typing import Any

from policy.chat import parse_tool_calls, render, render_suffix
from policy.engine import Engine, GenRequest, GenResult
from policy.model import Policy, load_policy, read_adapter


def _tito(res: GenResult) -> dict[str, Any]:
    return {"prompt_ids": list(res.prompt_ids), "output_ids": list(res.output_ids),
            "logprobs": list(res.logprobs), "version": res.version,
            "cached_tokens": res.cached_tokens}


def _usage(results: list[GenResult]) -> dict[str, Any]:
    prompt = sum(len(r.prompt_ids) for r in results)
    out = sum(len(r.output_ids) for r in results)
    return {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out,
            "prompt_tokens_details": {"cached_tokens": sum(r.cached_tokens for r in results)}}


def build_app(policy: Policy, *, rank: int = 0, max_batch: int = 8) -> Any:
    """The FastAPI app around one engine (its thread starts with the app)."""
    from fastapi import FastAPI, HTTPException
    from fastapi.responses import JSONResponse

    engine = Engine(policy, max_batch=max_batch)
    engine.start()
    app = FastAPI(title="envfactory policy server")
    app.state.engine = engine
    tok = policy.tokenizer
    inflight = {"n": 0}

    def encode(text: str) -> list[int]:
        return list(tok.encode(text, add_special_tokens=False))

    async def run(prompt_ids: list[int], body: dict[str, Any]) -> list[GenResult]:
        if len(prompt_ids) >= engine.max_context:
            # said, not cut: a truncated prompt would lose the task and look like a model error
            raise HTTPException(400, f"prompt of {len(prompt_ids)} tokens: the context is "
                                     f"{engine.max_context}")
        n = int(body.get("n") or 1)
        seed = body.get("seed")
        reqs = [GenRequest(prompt_ids=tuple(prompt_ids),
                           max_tokens=int(body.get("max_tokens") or
                                          body.get("max_completion_tokens") or 256),
                           temperature=float(body.get("temperature", 1.0)),
                           top_p=float(body.get("top_p", 1.0)),
                           seed=None if seed is None else int(seed) + i) for i in range(n)]
        inflight["n"] += n
        try:
            return list(await asyncio.gather(
                *(asyncio.wrap_future(engine.submit(r)) for r in reqs)))
        finally:
            inflight["n"] -= n

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {"ok": True, "model": policy.name, "version": engine.version, "rank": rank}

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": policy.name, "object": "model",
                                            "owned_by": "envfactory"}]}

    @app.get("/stats")
    async def stats() -> dict[str, Any]:
        return {"rank": rank, "version": engine.version, "inflight": inflight["n"],
                "cache_entries": len(engine.prefix), **engine.stats.as_dict()}

    @app.post("/v1/chat/completions")
    async def chat(body: dict[str, Any]) -> Any:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise HTTPException(400, "messages: a non-empty list is required")
        prefix = body.get("prefix_ids")
        if prefix:
            prompt_ids = [int(i) for i in prefix] + encode(render_suffix(messages))
        else:
            prompt_ids = encode(render(messages, body.get("tools")))
        results = await run(prompt_ids, body)
        choices = []
        for i, res in enumerate(results):
            text = tok.decode(list(res.output_ids), skip_special_tokens=True)
            content, calls = parse_tool_calls(text) if body.get("tools") else (text, [])
            msg: dict[str, Any] = {"role": "assistant", "content": content or None}
            if calls:
                msg["tool_calls"] = calls
            finish = "tool_calls" if calls else res.finish_reason
            choices.append({"index": i, "message": msg, "finish_reason": finish,
                            "tito": _tito(res)})
        return JSONResponse({"id": f"chatcmpl-{uuid.uuid4().hex[:16]}",
                             "object": "chat.completion", "created": int(time.time()),
                             "model": policy.name, "choices": choices,
                             "usage": _usage(results)})

    @app.post("/v1/completions")
    async def completions(body: dict[str, Any]) -> Any:
        prompt = body.get("prompt")
        if isinstance(prompt, list) and all(isinstance(i, int) for i in prompt) and prompt:
            prompt_ids = prompt  # OpenAI's API takes a prompt as token ids too
        elif isinstance(prompt, str) and prompt:
            prompt_ids = encode(prompt)
        else:
            raise HTTPException(400, "prompt: a non-empty string or list of token ids")
        if body.get("echo") and int(body.get("max_tokens") or 0) == 0:
            # scoring only: the prompt's log-probs, as OpenAI's echo + logprobs gives them
            temp = float(body.get("temperature", 1.0))
            # the version is read on the engine thread, with the weights that scored
            lps, version = await asyncio.wrap_future(engine.call(lambda _p: (
                engine.score(tuple(prompt_ids), temp), engine.version)))
            return JSONResponse({"id": f"cmpl-{uuid.uuid4().hex[:16]}",
                                 "object": "text_completion", "model": policy.name,
                                 "created": int(time.time()),
                                 "choices": [{"index": 0, "text": "", "finish_reason": "length",
                                              "tito": {"prompt_ids": list(prompt_ids),
                                                       "prompt_logprobs": [None, *lps],
                                                       "version": version}}]})
        results = await run(prompt_ids, body)
        choices = [{"index": i, "text": tok.decode(list(r.output_ids), skip_special_tokens=True),
                    "finish_reason": r.finish_reason, "tito": _tito(r)}
                   for i, r in enumerate(results)]
        return JSONResponse({"id": f"cmpl-{uuid.uuid4().hex[:16]}", "object": "text_completion",
                             "created": int(time.time()), "model": policy.name,
                             "choices": choices, "usage": _usage(results)})

    @app.post("/tokenize")
    async def tokenize(body: dict[str, Any]) -> dict[str, Any]:
        """Token ids of a text, or of a chat prompt (`messages`, `tools`) as chat renders it."""
        if isinstance(body.get("messages"), list) and body["messages"]:
            return {"ids": encode(render(body["messages"], body.get("tools")))}
        if not isinstance(body.get("text"), str):
            raise HTTPException(400, "text (a string) or messages (a list) is required")
        return {"ids": encode(body["text"])}

    @app.post("/weights")
    async def weights(body: dict[str, Any]) -> dict[str, Any]:
        path = Path(str(body.get("path", "")))
        if not path.is_file():
            raise HTTPException(400, f"path: no adapter file at {path}")
        version = int(body.get("version", engine.version + 1))
        state = read_adapter(path)  # read off the engine thread; applied between batches
        done = await asyncio.wrap_future(engine.push_weights(
            lambda p: p.load_adapter_state(state), version))
        return {"version": done}

    @app.on_event("shutdown")
    async def _stop() -> None:
        engine.stop()

    return app


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="serve the bundled policy (OpenAI-compatible, TITO)")
    ap.add_argument("--model", default="tiny")
    ap.add_argument("--adapter", type=Path, default=None)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8100)
    ap.add_argument("--rank", type=int, default=0)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seed", type=int, default=0, help="tiny's random base weights")
    ap.add_argument("--max-batch", type=int, default=8)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    args = ap.parse_args(argv)
    import torch
    import uvicorn

    if args.threads:
        torch.set_num_threads(args.threads)
    policy = load_policy(args.model, device=args.device, adapter=args.adapter, seed=args.seed)
    app = build_app(policy, rank=args.rank, max_batch=args.max_batch)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", timeout_keep_alive=120)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
