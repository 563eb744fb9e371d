"""Batched generation with a KV prefix cache and versioned weights, one per server process.

One thread owns the model (`Engine.serve_forever`): it takes the requests waiting in its queue
(up to `max_batch`, after a short window so concurrent requests meet), prefills each from the
longest cached prefix of its token ids, decodes them together in one left-padded batch, and
answers each with its output ids, per-token log-probs and the weight version that made them.
A weight push is applied by the same thread between two batches, so no request in flight is
dropped or sees two versions.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from policy.model import Policy


@dataclass(frozen=True)
class GenRequest:
    prompt_ids: tuple[int, ...]
    max_tokens: int = 256
    temperature: float = 1.0
    top_p: float = 1.0
    seed: int | None = None


@dataclass(frozen=True)
class GenResult:
    prompt_ids: tuple[int, ...]
    output_ids: tuple[int, ...]
    logprobs: tuple[float, ...]
    version: int
    cached_tokens: int
    finish_reason: str  # "stop" (an end token) or "length"


@dataclass
class EngineStats:
    requests: int = 0
    batches: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    busy_s: float = 0.0
    weight_loads: int = 0
    max_batch_seen: int = 0

    def as_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["prefix_hit_rate"] = self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0
        d["tokens_per_s"] = self.output_tokens / self.busy_s if self.busy_s else 0.0
        d["mean_batch"] = self.requests / self.batches if self.batches else 0.0
        return d


def _layers(cache: Any) -> list[tuple[Any, Any]]:
    return [(layer.keys, layer.values) for layer in cache.layers]


def _cache_kwarg() -> str:
    """transformers 5 renamed `past_key_values` to `cache`; accept either release."""
    import inspect

    from transformers import LlamaForCausalLM

    return "cache" if "cache" in inspect.signature(LlamaForCausalLM.forward).parameters \
        else "past_key_values"


def _cache(kv: list[tuple[Any, Any]]) -> Any:
    from transformers import DynamicCache

    return DynamicCache(ddp_cache_data=kv)


class PrefixCache:
    """Per-sequence KV tensors of recent generations, keyed by their token ids, evicted
    least-recently-used past a token budget. A hit gives the longest stored prefix."""

    def __init__(self, max_tokens: int = 16384) -> None:
        self.max_tokens = max_tokens
        self._entries: OrderedDict[tuple[int, ...], list[tuple[Any, Any]]] = OrderedDict()
        self._tokens = 0

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(self, ids: tuple[int, ...]) -> tuple[int, list[tuple[Any, Any]] | None]:
        best, best_key = 0, None
        for key in self._entries:
            n = min(len(key), len(ids) - 1)  # leave one token to prefill
            i = 0
            while i < n and key[i] == ids[i]:
                i += 1
            if i > best:
                best, best_key = i, key
        if best_key is None:
            return 0, None
        self._entries.move_to_end(best_key)
        # slicing is a view; the next forward concatenates, so the entry stays intact
        return best, [(k[:, :, :best], v[:, :, :best]) for k, v in self._entries[best_key]]

    def store(self, ids: tuple[int, ...], kv: list[tuple[Any, Any]]) -> None:
        if not ids or len(ids) > self.max_tokens:
            return
        if ids in self._entries:
            self._entries.move_to_end(ids)
            return
        self._entries[ids] = kv
        self._tokens += len(ids)
        while self._tokens > self.max_tokens and self._entries:
            old, _ = self._entries.popitem(last=False)
            self._tokens -= len(old)


def _sample(logits: Any, req: GenRequest, gen: Any) -> tuple[int, float]:
    import torch

    if req.temperature <= 1e-5:
        logp = torch.log_softmax(logits.float(), -1)
        tok = int(torch.argmax(logp))
        return tok, float(logp[tok])
    logp = torch.log_softmax(logits.float() / req.temperature, -1)
    probs = logp.exp()
    if req.top_p < 1.0:
        sorted_p, order = torch.sort(probs, descending=True)
        keep = torch.cumsum(sorted_p, -1) - sorted_p < req.top_p
        probs = torch.zeros_like(probs).scatter(0, order[keep], sorted_p[keep])
    tok = int(torch.multinomial(probs / probs.sum(), 1, generator=gen))
    # the behaviour log-prob is that of the tempered distribution (before top-p)
    return tok, float(logp[tok])


class Engine:
    """The model, its prefix cache and its weight version, driven by one thread."""

    def __init__(self, policy: Policy, *, max_batch: int = 8, batch_window_s: float = 0.01,
                 cache_tokens: int = 16384, max_context: int = 4096) -> None:
        self.policy = policy
        self.max_batch = max_batch
        self.batch_window_s = batch_window_s
        self.max_context = max_context
        self.version = 0
        self._kwarg = _cache_kwarg()
        self.prefix = PrefixCache(cache_tokens)
        self.stats = EngineStats()
        self._queue: queue.Queue[tuple[Any, Future[Any]]] = queue.Queue()
        self._deferred: deque[tuple[Any, Future[Any]]] = deque()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    # ---------------------------------------------------------------- the owning thread

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self.serve_forever, name="engine",
                                             daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._queue.put((None, Future()))

    def submit(self, req: GenRequest) -> Future[GenResult]:
        fut: Future[GenResult] = Future()
        self._queue.put((req, fut))
        return fut

    def push_weights(self, apply: Callable[[Policy], None], version: int) -> Future[Any]:
        """Queue a weight change; it is applied between batches and answers the version."""
        def change(policy: Policy) -> int:
            apply(policy)
            self.version = version
            self.prefix = PrefixCache(self.prefix.max_tokens)  # the old KV is stale
            self.stats.weight_loads += 1
            return version

        return self.call(change)

    def call(self, fn: Callable[[Policy], Any]) -> Future[Any]:
        """Run fn(policy) on the engine thread between two batches; its answer."""
        fut: Future[Any] = Future()
        self._queue.put((fn, fut))
        return fut

    def score(self, ids: tuple[int, ...], temperature: float = 1.0) -> list[float]:
        """Log-prob of each token after the first under the current weights (OpenAI's
        `echo` with `logprobs`), at the sampling temperature: a reference answer's
        behaviour log-probs. Call it on the engine thread (`call`)."""
        import torch

        with torch.no_grad():
            x = torch.tensor([ids], device=self.policy.device)
            logits = self.policy.model(input_ids=x).logits[0, :-1].float() / max(
                temperature, 1e-5)
            logp = torch.log_softmax(logits, -1).gather(1, x[0, 1:, None])[:, 0]
        return [float(v) for v in logp]

    def serve_forever(self) -> None:
        while not self._stop.is_set():
            # a weight push or call met while a batch was being collected runs first now:
            # behind the queue's tail, steady traffic could starve it
            item = self._deferred.popleft() if self._deferred else self._queue.get()
            if item[0] is None:
                return
            try:
                self._serve(item)
            except Exception:
                continue

    def _serve(self, item: tuple[Any, Future[Any]]) -> None:
        if not isinstance(item[0], GenRequest):
            fn, fut = item
            if fut.set_running_or_notify_cancel():
                try:
                    fut.set_result(fn(self.policy))
                except Exception as e:
                    fut.set_exception(e)
            return
        batch = [item]
        deadline = time.monotonic() + self.batch_window_s
        while len(batch) < self.max_batch:
            try:
                nxt = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if not isinstance(nxt[0], GenRequest):
                self._deferred.append(nxt)  # a push, a call or stop: right after this batch
                break
            batch.append(nxt)
        # a request whose waiter went away (cancelled) is not generated
        batch = [(r, f) for r, f in batch if f.set_running_or_notify_cancel()]
        if not batch:
            return
        try:
            results = self.generate([r for r, _ in batch])
        except Exception as e:
            for _, fut in batch:
                fut.set_exception(e)
            return
        for (_, fut), res in zip(batch, results, strict=True):
            fut.set_result(res)

    # ---------------------------------------------------------------- generation

    def _forward(self, ids: Any, kv: list[tuple[Any, Any]] | None, positions: Any,
                 mask: Any = None) -> tuple[Any, Any]:
        cache = _cache(kv) if kv else _cache([])
        out = self.policy.model(input_ids=ids, position_ids=positions, attention_mask=mask,
                                use_cache=True, **{self._kwarg: cache})
        new = out.get("cache") if out.get("cache") is not None else out.get("past_key_values")
        return out.logits, _layers(new)

    def generate(self, reqs: list[GenRequest]) -> list[GenResult]:
        """Generate for a batch of requests (called on the owning thread, or directly in a
        single-threaded program such as the trainer's evaluation)."""
        import torch

        t0 = time.monotonic()
        dev = self.policy.device
        eos = self.policy.eos_ids
        with torch.no_grad():
            rows: list[dict[str, Any]] = []
            for r in reqs:
                ids = tuple(r.prompt_ids)[-self.max_context:]
                hit, kv = self.prefix.lookup(ids)
                x = torch.tensor([ids[hit:]], device=dev)
                pos = torch.arange(hit, len(ids), device=dev)[None]
                logits, kv = self._forward(x, kv, pos)
                gen = torch.Generator(device="cpu")
                gen.manual_seed(r.seed if r.seed is not None else torch.seed() % 2**63)
                tok, lp = _sample(logits[0, -1].cpu(), r, gen)
                rows.append({"req": r, "ids": ids, "hit": hit, "kv": kv, "gen": gen,
                             "out": [tok], "lp": [lp], "done": tok in eos or r.max_tokens <= 1})
            longest = max(len(row["ids"]) for row in rows)
            nlayers = len(rows[0]["kv"])
            kv_batch = []
            for layer in range(nlayers):
                ks, vs = [], []
                for row in rows:
                    k, v = row["kv"][layer]
                    pad = longest - k.shape[2]
                    ks.append(torch.nn.functional.pad(k, (0, 0, pad, 0)))
                    vs.append(torch.nn.functional.pad(v, (0, 0, pad, 0)))
                kv_batch.append((torch.cat(ks), torch.cat(vs)))
            mask = torch.zeros(len(rows), longest, dtype=torch.long, device=dev)
            for i, row in enumerate(rows):
                mask[i, longest - len(row["ids"]):] = 1
            step = 0
            while not all(row["done"] for row in rows):
                x = torch.tensor([[row["out"][-1]] for row in rows], device=dev)
                pos = torch.tensor([[len(row["ids"]) + step] for row in rows], device=dev)
                mask = torch.cat([mask, torch.ones(len(rows), 1, dtype=torch.long,
                                                   device=dev)], 1)
                logits, kv_batch = self._forward(x, kv_batch, pos, mask)
                step += 1
                for i, row in enumerate(rows):
                    if row["done"]:
                        continue
                    tok, lp = _sample(logits[i, -1].cpu(), row["req"], row["gen"])
                    row["out"].append(tok)
                    row["lp"].append(lp)
                    full = len(row["ids"]) + len(row["out"]) >= self.max_context
                    if tok in eos or len(row["out"]) >= row["req"].max_tokens or full:
                        row["done"] = True
            results = []
            for i, row in enumerate(rows):
                if step:
                    start = longest - len(row["ids"])
                    valid = len(row["ids"]) + len(row["out"]) - 1  # the last token was not fed
                    span = min(valid, kv_batch[0][0].shape[2] - start)
                    # cloned: a view would keep the whole batch's tensors alive in the cache
                    kv_row = [(k[i:i + 1, :, start:start + span].clone(),
                               v[i:i + 1, :, start:start + span].clone()) for k, v in kv_batch]
                else:  # every row stopped at its first token: its own prefill KV, unpadded
                    span, kv_row = len(row["ids"]), row["kv"]
                seq = (row["ids"] + tuple(row["out"]))[:span]
                self.prefix.store(seq, kv_row)
                finish = "stop" if row["out"][-1] in eos else "length"
                results.append(GenResult(prompt_ids=row["ids"], output_ids=tuple(row["out"]),
                                         logprobs=tuple(row["lp"]), version=self.version,
                                         cached_tokens=row["hit"], finish_reason=finish))
                self.stats.prompt_tokens += len(row["ids"])
                self.stats.cached_tokens += row["hit"]
                self.stats.output_tokens += len(row["out"])
        self.stats.requests += len(reqs)
        self.stats.batches += 1
        self.stats.max_batch_seen = max(self.stats.max_batch_seen, len(reqs))
        self.stats.busy_s += time.monotonic() - t0
        return results
