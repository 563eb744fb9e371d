"""A prefix-affine router in front of N policy servers (the data-parallel ranks).

Each rollout id hashes to a point on a ring of virtual nodes; its requests go to the rank
that owns that point, so a multi-turn rollout's growing prefix stays in one server's KV
cache. Bounded loads (consistent hashing with bounded loads): a rank already holding more
than ceil((1 + c) * (in flight + 1) / N) requests passes the request on to the next rank on
the ring. Requests without a rollout id go to the least-loaded rank. `--routing random`
exists to measure what the affinity is worth (`bench/rl.py`).

    python -m policy.router --upstream http://127.0.0.1:8101 --upstream http://127.0.0.1:8102
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import math
import random
from typing import Any

from fastapi import Request  # module level: FastAPI resolves the handlers' annotations here


def _h(key: str) -> int:
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big")


class Ring:
    """Consistent hashing with bounded loads over ranks 0..n-1."""

    def __init__(self, n: int, *, vnodes: int = 64, c: float = 0.25) -> None:
        if n < 1:
            raise ValueError("a ring needs at least one rank")
        self.n, self.c = n, c
        points = sorted((_h(f"rank-{r}-{v}"), r) for r in range(n) for v in range(vnodes))
        self._keys = [p for p, _ in points]
        self._ranks = [r for _, r in points]
        self.load = [0] * n
        self.rebalanced = 0

    def home(self, key: str) -> int:
        """The rank a key belongs to when every rank has room."""
        i = bisect.bisect(self._keys, _h(key)) % len(self._keys)
        return self._ranks[i]

    def capacity(self) -> int:
        return math.ceil((1 + self.c) * (sum(self.load) + 1) / self.n)

    def pick(self, key: str | None) -> int:
        """The rank for one request (not yet counted in `load`)."""
        if key is None:
            return min(range(self.n), key=lambda r: self.load[r])
        cap = self.capacity()
        i = bisect.bisect(self._keys, _h(key)) % len(self._keys)
        home = self._ranks[i]
        for step in range(len(self._keys)):
            r = self._ranks[(i + step) % len(self._keys)]
            if self.load[r] < cap:
                if r != home:
                    self.rebalanced += 1
                return r
        return home


def rollout_key(body: dict[str, Any], headers: Any) -> str | None:
    key = headers.get("x-rollout-id") or body.get("rollout_id") or body.get("user")
    return str(key) if key else None


async def _post(client: Any, url: str, body: dict[str, Any]) -> Any:
    """POST once more when the connection failed (a pooled connection the server had just
    closed, almost always before the request was read; a generation may rarely run twice,
    and the second answer is the one recorded)."""
    import httpx

    try:
        return await client.post(url, json=body)
    except (httpx.RemoteProtocolError, httpx.ReadError, httpx.ConnectError):
        return await client.post(url, json=body)


def build_app(upstreams: list[str], *, routing: str = "affine", c: float = 0.25,
              seed: int = 0) -> Any:
    import httpx
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse

    ring = Ring(len(upstreams), c=c)
    rng = random.Random(seed)
    routed = [0] * len(upstreams)
    # idle connections expire before the servers' keep-alive (120 s) closes them under us
    client = httpx.AsyncClient(timeout=httpx.Timeout(3600.0, connect=10.0),
                               limits=httpx.Limits(keepalive_expiry=30.0))
    app = FastAPI(title="envfactory policy router")
    app.state.ring = ring

    async def forward(path: str, request: Request) -> Any:
        body = await request.json()
        key = rollout_key(body, request.headers)
        rank = rng.randrange(len(upstreams)) if routing == "random" else ring.pick(key)
        ring.load[rank] += 1
        routed[rank] += 1
        try:
            resp = await _post(client, upstreams[rank] + path, body)
        except httpx.HTTPError as e:
            return JSONResponse({"error": f"rank {rank} ({upstreams[rank]}): "
                                          f"{type(e).__name__}: {e}"}, 502)
        finally:
            ring.load[rank] -= 1
        out = JSONResponse(resp.json(), resp.status_code)
        out.headers["x-policy-rank"] = str(rank)
        return out

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Any:
        return await forward("/v1/chat/completions", request)

    @app.post("/v1/completions")
    async def completions(request: Request) -> Any:
        return await forward("/v1/completions", request)

    @app.post("/tokenize")
    async def tokenize(request: Request) -> Any:
        return await forward("/tokenize", request)

    @app.post("/weights")
    async def weights(request: Request) -> Any:
        """Broadcast a weight push to every rank; answer once all have it."""
        body = await request.json()
        versions = []
        for url in upstreams:
            try:
                resp = await client.post(url + "/weights", json=body)
            except httpx.HTTPError as e:
                resp = None
                text = f"{type(e).__name__}: {e}"
            if resp is None or resp.status_code != 200:
                # the ranks before this one have the new version: say which, so a retry can
                return JSONResponse({"error": f"{url}: {text if resp is None else resp.text}",
                                     "updated": upstreams[:len(versions)]},
                                    502 if resp is None else resp.status_code)
            versions.append(resp.json()["version"])
        return {"versions": versions}

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {"ok": True, "ranks": len(upstreams), "routing": routing}

    @app.get("/stats")
    async def stats() -> dict[str, Any]:
        ranks = []
        for r, url in enumerate(upstreams):
            try:
                s = (await client.get(url + "/stats")).json()
            except httpx.HTTPError as e:
                s = {"error": str(e)}
            ranks.append({"rank": r, "url": url, "routed": routed[r], "load": ring.load[r], **s})
        prompt = sum(s.get("prompt_tokens", 0) for s in ranks)
        cached = sum(s.get("cached_tokens", 0) for s in ranks)
        return {"routing": routing, "rebalanced": ring.rebalanced, "ranks": ranks,
                "prefix_hit_rate": cached / prompt if prompt else 0.0}

    @app.on_event("shutdown")
    async def _close() -> None:
        await client.aclose()

    return app


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="route policy requests to data-parallel ranks")
    ap.add_argument("--upstream", action="append", required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8100)
    ap.add_argument("--routing", choices=["affine", "random"], default="affine")
    ap.add_argument("--balance", type=float, default=0.25, help="bounded-load slack c")
    args = ap.parse_args(argv)
    import uvicorn

    uvicorn.run(build_app(args.upstream, routing=args.routing, c=args.balance),
                host=args.host, port=args.port, log_level="warning", timeout_keep_alive=120)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
