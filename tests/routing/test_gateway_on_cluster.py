"""The gateway process (``python -m routing``) unchanged on a real 3-master Redis Cluster, found by
asking the server (TOKENWAY_REDIS_CLUSTER unset), with 3 usage shards: calls are admitted, held and
settled, limits refuse, events land on the tenant's shard, a moved slot is followed, and a master
down answers 503 as a single Redis down does."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import redis
import requests

from contracts import redis_keys as rk
from contracts.keyrecord import Limits
from devtools.ports import free_port, wait_for_port
from devtools.processes import spawn, stop
from devtools.redis_cluster import redis_cluster
from sim.server import SimHandle
from tests.catalogs import sim_catalog
from tests.routing.cluster_nodes import move_slot, nodes, owner, shut_down
from tests.routing.harness import Tenant, make_tenant
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
SHARDS = 3
MSG = [{"role": "user", "content": "hi"}]


class ClusterGateway:
    """A gateway process on ``url`` and a cluster client of the test's own."""

    def __init__(self, url: str, sim: SimHandle, spool: Path) -> None:
        self.client = redis.RedisCluster.from_url(url)
        self.client.set(rk.CATALOG_SNAPSHOT, sim_catalog(sim.provider_url).to_json())
        self.client.incr(rk.CATALOG_VERSION)
        self.port = free_port()
        env = {**os.environ, "REDIS_URL": url, "TOKENWAY_REDIS_CLUSTER": "", "TOKENWAY_USAGE_SHARDS": str(SHARDS),
               "TOKENWAY_SPOOL_DIR": str(spool), "TOKENWAY_FIRST_TOKEN_TIMEOUT": "5", "TOKENWAY_DEADLINE": "10",
               "PYTHONPATH": f"{ROOT}:{ROOT / 'platform'}"}  # fmt: skip
        self.process: subprocess.Popen[bytes] = spawn(
            [sys.executable, "-m", "routing", "--port", str(self.port)], env=env, cwd=ROOT
        )
        wait_for_port(self.port, timeout=30)
        self.base_url = f"http://127.0.0.1:{self.port}"

    def chat(self, tenant: Tenant, **extra: Any) -> requests.Response:
        body = {"model": "gpt-4.1-mini", "messages": MSG, "max_tokens": 20, **extra}
        return requests.post(
            f"{self.base_url}/v1/chat/completions",
            json=body,
            timeout=20,
            headers={"authorization": f"Bearer {tenant.key}"},
        )

    def events(self, stream: str) -> list[dict[str, Any]]:
        entries: Any = self.client.xrange(stream)
        return [orjson.loads(fields[b"e"]) for _, fields in entries]

    def wait_events(self, tenant_id: int, n: int) -> list[dict[str, Any]]:
        stream = rk.usage_stream(rk.usage_shard(tenant_id, SHARDS))
        mine = lambda: [e for e in self.events(stream) if e["tenant_id"] == tenant_id]  # noqa: E731
        wait_until(lambda: len(mine()) >= n, timeout=5, message=f"{n} usage events of tenant {tenant_id}")
        return mine()

    def close(self) -> None:
        stop(self.process, timeout=10)
        self.client.close()


@pytest.fixture(scope="module")
def on_cluster(sim: SimHandle, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, ClusterGateway]]:
    with redis_cluster(masters=3) as url:
        gateway = ClusterGateway(url, sim, tmp_path_factory.mktemp("spool"))
        try:
            yield url, gateway
        finally:
            gateway.close()


def test_calls_are_admitted_settled_and_their_events_land_on_the_tenants_shard(on_cluster):
    url, gateway = on_cluster
    tenants = [make_tenant(gateway.client) for _ in range(SHARDS)]  # consecutive ids: one per shard
    assert {rk.usage_shard(t.record.tenant_id, SHARDS) for t in tenants} == set(range(SHARDS))
    assert len({owner(url, rk.tenant_tag(t.record.tenant_id))[1].port for t in tenants}) > 1
    for tenant in tenants:
        before = tenant.avail()
        assert gateway.chat(tenant).status_code == 200
        streamed = gateway.chat(tenant, stream=True, stream_options={"include_usage": True})
        assert streamed.status_code == 200 and b"data: [DONE]" in streamed.content
        events = gateway.wait_events(tenant.record.tenant_id, 2)
        assert [e["status"] for e in events] == ["ok", "ok"] and {e["stream"] for e in events} == {False, True}
        charged = sum(e["charge_micros"] for e in events)
        assert charged > 0
        # held, then settled to the charge (settlement is its own round trip after the usage event)
        settled = before - charged
        wait_until(lambda t=tenant, s=settled: t.avail() == s, timeout=10, message="both calls settled")
        tid = tenant.record.tenant_id
        assert (
            gateway.client.hlen(rk.tenant_holds(tid)) == 0 and gateway.client.zcard(rk.tenant_hold_expiries(tid)) == 0
        )
    for shard in range(SHARDS):  # no event on another tenant's shard
        on_shard = {e["tenant_id"] for e in gateway.events(rk.usage_stream(shard))}
        assert on_shard == {t.record.tenant_id for t in tenants if rk.usage_shard(t.record.tenant_id, SHARDS) == shard}


def test_the_request_rate_limit_answers_429(on_cluster):
    _, gateway = on_cluster
    tenant = make_tenant(gateway.client, key_limits=Limits(rpm=2))
    assert [gateway.chat(tenant).status_code for _ in range(2)] == [200, 200]
    refused = gateway.chat(tenant)
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "key_rate_limited"
    assert int(refused.headers["retry-after"]) >= 1


def test_a_tenant_whose_slot_moved_to_another_master_is_still_served(on_cluster):
    url, gateway = on_cluster
    tenant = make_tenant(gateway.client)
    tid = tenant.record.tenant_id
    funded = tenant.avail()
    assert gateway.chat(tenant).status_code == 200
    slot, source = owner(url, rk.tenant_tag(tid))
    target = next(node for node in nodes(url) if node.port != source.port)
    move_slot(url, slot, source, target)  # the gateway's map still names the source: MOVED
    assert gateway.chat(tenant).status_code == 200
    charged = sum(event["charge_micros"] for event in gateway.wait_events(tid, 2))
    # Settlement is its own round trip after the usage event: both holds released, both charges taken.
    wait_until(lambda: tenant.avail() == funded - charged, timeout=10, message="both calls settled on the new master")
    assert target.client.execute_command("CLUSTER COUNTKEYSINSLOT", slot) > 0
    assert source.client.execute_command("CLUSTER COUNTKEYSINSLOT", slot) == 0


def test_a_master_down_answers_503_for_its_tenants_as_a_single_redis_down(sim, tmp_path):
    with redis_cluster(masters=3) as url:
        gateway = ClusterGateway(url, sim, tmp_path / "spool")
        try:
            tenants = [make_tenant(gateway.client) for _ in range(12)]
            down = owner(url, rk.tenant_tag(tenants[0].record.tenant_id))[1]
            up = next(t for t in tenants if owner(url, rk.tenant_tag(t.record.tenant_id))[1].port != down.port)
            for tenant in (tenants[0], up):
                assert gateway.chat(tenant).status_code == 200  # keys cached in the gateway
            shut_down(down)
            started = time.monotonic()
            refused = gateway.chat(tenants[0])
            assert refused.status_code == 503, refused.text
            assert refused.json()["error"]["code"] == "service_unavailable"
            assert int(refused.headers["retry-after"]) >= 1
            served = gateway.chat(up)  # its master is up; the cluster still serves it until it declares the loss
            assert served.status_code == 200 or time.monotonic() - started > 4, served.text
        finally:
            gateway.close()
