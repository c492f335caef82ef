"""Cross-check of the virtual replay over real HTTP: a smaller mix sent with the official ``openai``
SDK (agent turns with the ``anthropic`` SDK: Anthropic Messages with cache breakpoints, as coding
agents send them) through the gateway (uvicorn, real Redis) to the simulated fleet in real time,
routed by Tokenway balanced, beside the virtual replay of the same mix. Differences expected: the
fleet's draws come from the request bytes (not the replay's seeds), bodies are real text (a message
adds 4 tokens of overhead), and agent turns carry no tools here. Cache hits are the fleet's truth
(its request log); what the gateway reported to the client is shown beside it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field

import anthropic
import openai
import redis
import requests as http

from bench.routing_sim.probes import Evaluation
from bench.routing_sim.run import bench_catalog, compare
from bench.routing_sim.workload import Request, build
from bench.routing_sim.world import World
from contracts import redis_keys as rk
from sim.prompt import Segment
from sim.server import start_in_thread
from tests.routing.harness import ServerThread, make_tenant, publish_catalog, test_config

DURATION_S = 45.0  # real seconds the mix arrives over
HOUR = 13  # Beijing hour on both sides (no profile drift at 13 h)
WORDS = ("alpha", "delta", "omega", "sigma", "kappa", "gamma", "theta", "lambda")


def _text(ident: bytes, tokens: int) -> str:
    """``tokens`` tokens of text (4 ASCII characters each, contracts.tokens) that only this segment has."""
    seed = sum(ident) + len(ident) * 131
    head = ident.decode() + " "
    body = "".join(WORDS[(seed + i) % len(WORDS)][:3] + " " for i in range(max(0, tokens - len(head) // 4)))
    return head + body


def _content(segment: Segment) -> object:
    text = _text(segment.norm, segment.tokens)
    if not segment.ttl:
        return text
    return [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}]  # a cache breakpoint


def anthropic_body_of(request: Request) -> dict[str, object]:
    """An agent turn as coding agents send it: Anthropic Messages, breakpoints on the system prompt
    and the newest message (the gateway's OpenAI-to-Anthropic translation keeps no cache_control)."""
    segments = request.prompt.segments

    def blocks(segment: Segment) -> list[dict[str, object]]:
        block: dict[str, object] = {"type": "text", "text": _text(segment.norm, segment.tokens)}
        if segment.ttl:
            block["cache_control"] = {"type": "ephemeral"}
        return [block]

    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": blocks(s)} for i, s in enumerate(segments[1:])
    ]
    return {"model": request.model, "system": blocks(segments[0]), "messages": messages,
            "max_tokens": request.max_tokens, "stream": True}  # fmt: skip


def body_of(request: Request) -> dict[str, object]:
    segments = request.prompt.segments
    messages = [{"role": "system", "content": _content(segments[0])}]
    for i, segment in enumerate(segments[1:]):
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": _content(segment)})
    return {"model": request.model, "messages": messages, "max_tokens": request.max_tokens, "stream": True,
            "stream_options": {"include_usage": True}}  # fmt: skip


@dataclass
class Seen:
    ok: int = 0
    failed: int = 0
    ttft: list[float] = field(default_factory=list)
    prompt_tokens: int = 0
    cached: int = 0
    providers: Counter[str] = field(default_factory=Counter)
    by_kind: Counter[str] = field(default_factory=Counter)  # "<kind>:<provider>" -> (prompt, cached) sums
    cached_by_kind: Counter[str] = field(default_factory=Counter)


async def _send_anthropic(client: anthropic.AsyncAnthropic, request: Request, seen: Seen, sent: float) -> None:
    first, prompt, cached = None, 0, 0
    try:
        raw = await client.messages.with_raw_response.create(**anthropic_body_of(request))  # type: ignore[call-overload]
        async for event in await raw.parse():
            if event.type == "message_start":
                usage = event.message.usage
                cached = usage.cache_read_input_tokens or 0
                prompt = usage.input_tokens + cached + (usage.cache_creation_input_tokens or 0)
            elif first is None and event.type == "content_block_delta":
                first = time.monotonic() - sent
    except anthropic.APIError:
        seen.failed += 1
        return
    provider = raw.headers.get("x-tokenway-provider", "?")
    seen.prompt_tokens, seen.cached = seen.prompt_tokens + prompt, seen.cached + cached
    seen.by_kind[f"agent:{provider}"] += prompt
    seen.cached_by_kind[f"agent:{provider}"] += cached
    seen.providers[provider] += 1
    seen.ok += 1
    if first is not None:
        seen.ttft.append(first)


async def _send(
    clients: tuple[openai.AsyncOpenAI, anthropic.AsyncAnthropic], request: Request, start: float, seen: Seen
) -> None:
    await asyncio.sleep(max(0.0, start + request.at - time.monotonic()))
    sent = time.monotonic()
    if request.kind == "agent":
        await _send_anthropic(clients[1], request, seen, sent)
        return
    client = clients[0]
    first = None
    try:
        raw = await client.chat.completions.with_raw_response.create(**body_of(request))  # type: ignore[call-overload]
        stream = raw.parse()
        async for chunk in stream:
            if (
                first is None
                and chunk.choices
                and (chunk.choices[0].delta.content or chunk.choices[0].delta.tool_calls)
            ):
                first = time.monotonic() - sent
            if chunk.usage:
                details = chunk.usage.prompt_tokens_details
                cached = (details.cached_tokens or 0) if details else 0
                seen.prompt_tokens += chunk.usage.prompt_tokens
                seen.cached += cached
                where = f"{request.kind}:{raw.headers.get('x-tokenway-provider', '?')}"
                seen.by_kind[where] += chunk.usage.prompt_tokens
                seen.cached_by_kind[where] += cached
        seen.providers[raw.headers.get("x-tokenway-provider", "?")] += 1
    except openai.APIError:
        seen.failed += 1
        return
    seen.ok += 1
    if first is not None:
        seen.ttft.append(first)


async def _replay(base_url: str, key: str, mix: list[Request]) -> Seen:
    seen = Seen()
    async with (
        openai.AsyncOpenAI(base_url=f"{base_url}/v1", api_key=key, max_retries=0, timeout=60) as oai,
        anthropic.AsyncAnthropic(base_url=base_url, api_key=key, max_retries=0, timeout=60) as claude,
    ):
        start = time.monotonic() + 0.5
        await asyncio.gather(*(_send((oai, claude), r, start, seen) for r in mix))
    return seen


def _ground_truth(sim_url: str) -> tuple[int, int, int]:
    """(upstream 429s, prompt tokens, of which read from cache) from the fleet's request log."""
    entries = []
    for provider in {o.provider for o in bench_catalog().offerings}:
        query: dict[str, str | int] = {"provider": provider, "limit": 500}
        got = http.get(f"{sim_url}/_sim/requests", params=query, timeout=5).json()
        entries += [e.get("sim") or {} for e in got["requests"]]
    usage = [e["true_usage"] for e in entries if "true_usage" in e]
    throttled = sum(1 for e in entries if e.get("status") == 429)
    return throttled, sum(u["input_total"] for u in usage), sum(u["cache_read"] for u in usage)


def run(n: int, *, seed: int = 1) -> str:
    mix = build(n, seed=seed, duration_s=DURATION_S)
    virtual, _ = compare(
        mix, ["tokenway:balanced"], seed=seed, world_factory=lambda: World(seed=seed, incidents=(), start_hour=HOUR)
    )[0]
    client = redis.Redis.from_url(os.environ["REDIS_URL"])
    with start_in_thread(seed=seed, time_scale=1.0) as sim:
        http.post(f"{sim.base_url}/_sim/clock", json={"hour": HOUR, "tz_offset_h": 8}, timeout=5).raise_for_status()
        catalog = bench_catalog()
        offerings = tuple(dataclasses.replace(o, base_url=sim.provider_url(o.provider)) for o in catalog.offerings)
        catalog = dataclasses.replace(catalog, version=int(time.time()), generated_at=time.time(), offerings=offerings)
        publish_catalog(client, catalog)
        stats = Evaluation(World(seed=seed, incidents=(), start_hour=HOUR), list(catalog.offerings)).round()
        client.set(rk.STATS_SNAPSHOT, stats.to_json())
        client.incr(rk.STATS_VERSION)
        client.publish(rk.SNAPSHOT_CHANNEL, "stats")
        tenant = make_tenant(client)
        gateway = ServerThread(_app())
        try:
            _wait_for(gateway, catalog.version)
            seen = asyncio.run(_replay(gateway.base_url, tenant.key, mix))
            truth = _ground_truth(sim.base_url)
        finally:
            gateway.stop()
    return _report(n, virtual, seen, truth)


def _app() -> object:
    from routing.app import make_gateway_app

    return make_gateway_app(test_config(first_token_timeout_s=10.0, idle_timeout_s=10.0, deadline_s=120.0))


def _wait_for(gateway: ServerThread, version: int) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        state = gateway.gateway.catalog
        if state.catalog is not None and state.catalog.version == version and state.stats is not None:
            return
        time.sleep(0.05)
    raise RuntimeError("the gateway did not load the catalog and statistics")


def _report(n: int, virtual, seen: Seen, truth: tuple[int, int, int]) -> str:
    throttled, prompt_tokens, cache_read = truth
    row = virtual.row()
    total = seen.ok + seen.failed
    top_virtual = ", ".join(f"{p} {c / virtual.ok:.0%}" for p, c in virtual.served_by.most_common(4))
    top_http = ", ".join(f"{p} {c / max(1, seen.ok):.0%}" for p, c in seen.providers.most_common(4))
    p50 = statistics.median(seen.ttft) * 1000 if seen.ttft else float("nan")
    return "\n".join(
        (
            f"cross-check over real HTTP: {n} requests over {DURATION_S:.0f} s through the gateway (Tokenway balanced,"
            " openai SDK, agents with the anthropic SDK, streaming) to the fleet at time scale 1, beside the virtual replay",
            "figure | virtual replay | real HTTP",
            "--- | --- | ---",
            f"answered | {row['success']:.1%} | {seen.ok / total:.1%}",
            f"upstream 429s | {row['429s']} | {throttled}",
            f"p50 TTFT | {row['p50'] * 1000:.0f} ms | {p50:.0f} ms",
            f"cache hit (input tokens, fleet's truth) | {row['cache']:.1%} | {cache_read / max(1, prompt_tokens):.1%}",
            f"cache hit reported to the client | - | {seen.cached / max(1, seen.prompt_tokens):.1%}",
            f"served by | {top_virtual} | {top_http}",
            "reproduce: .venv/bin/python -m bench.routing_sim --variants documented --http --http-requests " + str(n),
            "",
        )
    )
