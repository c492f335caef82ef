"""The upstream sessions keep no cookies: tenants' calls share them (the platform's session, and the
one for tenants' own provider URLs), so a provider's ``Set-Cookie`` answered to one call must never
ride on the next one."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import aiohttp
import pytest
from aiohttp import web

from devtools.ports import free_port
from routing.upstream.byok_connect import make_byok_session
from routing.upstream.http_client import make_session
from tests.routing import harness

SESSIONS: dict[str, Callable[[], aiohttp.ClientSession]] = {
    "platform": lambda: make_session(harness.test_config()),
    "byok": lambda: make_byok_session(connect_timeout_s=5, allow_loopback=True),
}


@pytest.mark.parametrize("which", sorted(SESSIONS))
def test_a_providers_set_cookie_is_not_sent_on_the_next_call(which: str) -> None:
    seen: list[str | None] = []  # a host name, not an IP: cookie jars refuse IP hosts by default

    async def handler(request: web.Request) -> web.Response:
        seen.append(request.headers.get("Cookie"))
        response = web.json_response({"ok": True})
        response.set_cookie("session", "tenant-a-affinity")
        return response

    async def scenario() -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", handler)
        runner = web.AppRunner(app)
        await runner.setup()
        port = free_port()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        session = SESSIONS[which]()
        try:
            for _ in range(2):
                async with session.post(f"http://localhost:{port}/v1/chat/completions", data=b"{}") as response:
                    assert response.status == 200
                    assert "session" in response.cookies  # the provider did set one
        finally:
            await session.close()
            await runner.cleanup()

    asyncio.run(scenario())
    assert seen == [None, None]
