"""``GET /healthz`` of a standalone gateway process: is it up, and how full.

Capacity is what operators size by: open streams against the file-descriptor ceiling (two per
stream), upstream requests in flight, and pool waits and their timeouts (our own per-host limit,
counted apart from provider failures).
"""

from __future__ import annotations

from typing import Any

import orjson

from routing.gateway import Gateway
from routing.http.asgi_io import Send, respond
from routing.process.capacity import STREAMS, open_fds

PATH = "/healthz"


def snapshot(gateway: Gateway) -> dict[str, Any]:
    pool = gateway.pool_stats()
    ceiling = gateway.fd_ceiling
    spool = gateway.spool
    return {
        # Degraded while usage has nowhere durable to go but memory (routing.handoff.spool); still 200: the
        # process serves, and refuses paid work by itself while neither Redis nor the spool takes usage.
        "status": "ok" if spool.writable and not spool.held else "degraded",
        "usage_spool": spool.state(),
        "open_streams": STREAMS.open,
        "stream_ceiling": ceiling.streams,
        "fd_limit": ceiling.soft,
        "fd_hard_limit": ceiling.hard,
        "open_fds": open_fds(),
        "upstream": {
            "in_flight": pool.in_flight,
            "per_host_limit": gateway.config.upstream_per_host_limit or None,
            "pool_wait_s": gateway.config.pool_wait_s,
            "waiting": pool.waiting,
            "waited_total": pool.waited,
            "wait_timeouts_total": pool.wait_timeouts,
        },
    }


async def serve(gateway: Gateway, send: Send) -> None:
    await respond(send, 200, orjson.dumps(snapshot(gateway)), [])
