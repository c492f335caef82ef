"""Real servers on loopback for gateway tests: the simulated fleet, the gateway under uvicorn,
and the Redis state the platform would publish (key records, catalog snapshot, balances)."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, replace
from typing import Any, cast

import redis
import uvicorn

from contracts import redis_keys as rk
from contracts.apikey_format import generate_key, hash_key
from contracts.env import DEV_PEPPER
from contracts.keyrecord import KeyRecord, Limits
from contracts.snapshot import CatalogSnapshot
from devtools.ports import free_port
from routing.process.config import GatewayConfig
from tests.waiting import poll_until


class ServerThread:
    """Any ASGI app under uvicorn in a daemon thread, with lifespan."""

    def __init__(self, app: Any, port: int | None = None) -> None:
        self.app = app
        self.port = port or free_port()
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, lifespan="on", log_level="warning", loop="asyncio"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        poll_until(lambda: self.server.started or not self.thread.is_alive(), timeout=15)
        if not self.server.started:
            raise RuntimeError("gateway server did not start")
        self.base_url = f"http://127.0.0.1:{self.port}"

    @property
    def gateway(self) -> Any:
        """The app's long-lived parts (routing.gateway.Gateway): health board, caches, ..."""
        return self.app.gateway

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def publish_catalog(client: redis.Redis, catalog: CatalogSnapshot) -> None:
    """Snapshot, then version (two slots on a cluster: no transaction; a reader sees the version last).
    The version is new for the whole session: after a flush, a counter would restart at a value the
    gateway has already seen, and it would keep the previous test's catalog."""
    client.set(rk.CATALOG_SNAPSHOT, catalog.to_json())
    client.set(rk.CATALOG_VERSION, time.time_ns())
    client.publish(rk.SNAPSHOT_CHANNEL, "catalog")


def usage_events(client: redis.Redis) -> list[dict[str, Any]]:
    """Every usage event on the hand-off, all shards (TOKENWAY_USAGE_SHARDS), oldest first."""
    import orjson

    entries: list[tuple[bytes, dict[bytes, bytes]]] = []
    for stream in rk.usage_streams(rk.usage_shard_count(os.environ)):
        entries += cast(list[tuple[bytes, dict[bytes, bytes]]], client.xrange(stream))
    entries.sort(key=lambda entry: tuple(int(part) for part in entry[0].split(b"-")))
    return [orjson.loads(fields[b"e"]) for _, fields in entries]


def test_config(**overrides: Any) -> GatewayConfig:
    base = GatewayConfig(
        redis_url=os.environ["REDIS_URL"],
        region="beijing",
        first_token_timeout_s=1.5,
        idle_timeout_s=1.5,
        deadline_s=6.0,
        breaker_failures=3,
        breaker_cooldown_s=0.5,
    )
    return replace(base, **overrides)


@dataclass
class Tenant:
    key: str
    record: KeyRecord
    client: redis.Redis

    @property
    def key_hash(self) -> str:
        return hash_key(self.key, DEV_PEPPER)

    def avail(self) -> int:
        return int(self.client.get(rk.tenant_available(self.record.tenant_id)) or 0)

    def events(self) -> list[dict[str, Any]]:
        return usage_events(self.client)

    def wait_events(self, n: int = 1, timeout: float = 3.0) -> list[dict[str, Any]]:
        """Events are written right after the response; wait until ``n`` are in the stream (fewer on timeout)."""

        def enough() -> tuple[list[dict[str, Any]], ...]:
            events = self.events()
            return (events,) if len(events) >= n else ()

        found = poll_until(enough, timeout=timeout, interval=0.01)
        return found[0] if found else self.events()

    def update(self, **changes: Any) -> None:
        self.record = replace(self.record, **changes)
        self.client.set(rk.key_record(self.key_hash), self.record.to_json())
        self.client.publish(rk.KEYS_CHANNEL, self.key_hash)


_tenant_ids = iter(range(1000, 10**6))


def make_tenant(client: redis.Redis, *, balance: int = 10**9, **fields: Any) -> Tenant:
    tenant_id = next(_tenant_ids)
    key = generate_key(live=False)
    record = KeyRecord(
        key_id=tenant_id * 10,
        tenant_id=tenant_id,
        tenant_slug=f"t{tenant_id}",
        name="test",
        prefix=key[:12],
        key_limits=fields.pop("key_limits", Limits()),
        tenant_limits=fields.pop("tenant_limits", Limits()),
        **fields,
    )
    client.set(rk.key_record(hash_key(key, DEV_PEPPER)), record.to_json())
    client.set(rk.tenant_available(tenant_id), balance)
    return Tenant(key, record, client)
