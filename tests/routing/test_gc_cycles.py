"""A request leaves nothing for the garbage collector: no reference cycle on the hot path.

A cycle per request (a call holding a callback that holds the call) makes the collector's pauses
land on the slowest requests: its full collections take tens of milliseconds on a busy gateway.
Objects in cycles are found by collecting with ``DEBUG_SAVEALL``, which keeps what it would free.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
import requests

from tests.routing.harness import ServerThread, Tenant

REQUESTS = 60
WARM_UP = 10  # first calls fill caches, pools and lazy imports: not per-request garbage
HI = [{"role": "user", "content": "hi"}]


def _cycles(send: Callable[[], None]) -> Counter[str]:
    """Objects of the gateway's own types left in reference cycles by ``REQUESTS`` calls of ``send``."""
    for _ in range(WARM_UP):
        send()
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for _ in range(REQUESTS):
            send()
        gc.collect()
        found = Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    return Counter({name: n for name, n in found.items() if name.startswith(("routing.", "contracts."))})


def _post(gateway: ServerThread, tenant: Tenant, path: str, body: dict[str, Any]) -> Callable[[], None]:
    session = requests.Session()
    session.headers["authorization"] = f"Bearer {tenant.key}"

    def send() -> None:
        with session.post(f"{gateway.base_url}{path}", json=body, stream=True, timeout=10) as response:
            assert response.status_code == 200, response.text
            for _ in response.iter_content(chunk_size=None):
                pass

    return send


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/chat/completions", {"model": "deepseek-v3.2", "messages": HI, "max_tokens": 5}),
        ("/v1/chat/completions", {"model": "deepseek-v3.2", "messages": HI, "max_tokens": 5, "stream": True}),
        ("/v1/messages", {"model": "claude-sonnet-4.5", "messages": HI, "max_tokens": 5}),
        ("/v1/messages", {"model": "deepseek-v3.2", "messages": HI, "max_tokens": 5, "stream": True}),
    ],
    ids=["chat", "chat-stream", "messages", "messages-translated-stream"],
)
def test_a_request_leaves_no_reference_cycle(gateway, tenant, path, body):
    assert _cycles(_post(gateway, tenant, path, body)) == Counter()
