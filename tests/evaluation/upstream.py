"""A tiny misbehaving provider on loopback (OpenAI dialect), one behaviour per model name."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from aiohttp import web

from contracts.snapshot import OfferingSnapshot
from contracts.usage import Prices

GOOD_CHUNK = b'data: {"choices":[{"index":0,"delta":{"content":"hello there "}}]}\n\n'
USAGE = b'data: {"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":4}}\n\n'


async def _handle(request: web.Request) -> web.StreamResponse:
    body = await request.json()
    model = body["model"]
    if model == "rate-limited":
        return web.json_response(
            {"error": {"message": "slow down"}},
            status=429,
            headers={"x-ratelimit-remaining-requests": "0", "retry-after": "7"},
        )
    if model == "down":
        return web.json_response({"error": {"message": "unavailable"}}, status=503)
    if model == "slow":
        await asyncio.sleep(1)
    if model == "not-json":
        return web.Response(body=b"<html>oops</html>", content_type="text/html")
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    if model == "garbage-chunk":
        await response.write(GOOD_CHUNK + b"data: {not json\n\n")
    elif model == "truncated":
        await response.write(GOOD_CHUNK * 3)  # no usage, no [DONE]: the stream just ends
    elif model == "bad-usage":
        await response.write(
            GOOD_CHUNK * 2
            + b'data: {"choices":[],"usage":{"prompt_tokens":-5,"completion_tokens":"x"}}\n\ndata: [DONE]\n\n'
        )
    else:
        await response.write(GOOD_CHUNK)
        await asyncio.sleep(0.01)
        await response.write(GOOD_CHUNK * 2 + USAGE + b"data: [DONE]\n\n")
    return response


@contextmanager
def misbehaving_upstream() -> Iterator[str]:
    loop = asyncio.new_event_loop()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", _handle)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)


def offering(offering_id: int, model: str, base_url: str) -> OfferingSnapshot:
    return OfferingSnapshot(
        offering_id=offering_id,
        model=model,
        provider="misbehaving",
        upstream_model=model,
        dialect="openai",
        base_url=base_url,
        usage_dialect="openai",
        cached_tokens_in_input=True,
        prices=Prices(input=1_000_000, output=2_000_000),
        context_window=8192,
        max_output=1024,
    )
