"""Holds: the gateway's admission script against a balance that covers exactly 50 of 200 requests."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
import redis
import redis.asyncio as aredis
from django.conf import settings

from contracts import redis_keys as rk
from metering.holds import hold_place, hold_settle, holds_open_micros, holds_reap
from metering.services import balance_topup, tenant_available_ensure
from routing.limits.scripts import ADMISSION

pytestmark = [pytest.mark.cluster, pytest.mark.local_servers]

HOLD = 25_000
CONCURRENT = 200
COVERED = 50


async def _admit(client: aredis.Redis, tenant_id: int, n: int) -> int:
    now = time.time()
    keys = [
        rk.rate_window(tenant_id, "key:1", int(now // 60)),
        rk.rate_window(tenant_id, "tenant", int(now // 60)),
        rk.concurrency(tenant_id, "key:1"),
        rk.concurrency(tenant_id, "tenant"),
        rk.key_month_spend(tenant_id, 1, "202601"),
        rk.tenant_available(tenant_id),
        rk.tenant_holds(tenant_id),
        rk.tenant_hold_expiries(tenant_id),
        rk.rate_window(tenant_id, "key:1", int(now // 60) - 1),
        rk.rate_window(tenant_id, "tenant", int(now // 60) - 1),
        rk.tenant_month_spend(tenant_id, "202601"),
        rk.tenant_held(tenant_id),
        rk.tenant_hold_keys(tenant_id),
    ]
    args: list[Any] = [
        now,
        0,
        0,
        0,
        0,
        0,
        0,
        100,
        f"l{n}",
        now + 60,
        -1,
        HOLD,
        f"h{n}",
        f"{tenant_id}:h{n}",
        now + 60,
        30,
        -1,
        rk.held_key_field(1),
        1,
    ]
    code, _ = await client.eval(ADMISSION.source, len(keys), *keys, *args)
    return int(code)


def _slot_owner_url(client: Any, tenant_id: int) -> str:
    """The server that runs the tenant's scripts: on a cluster, the master owning its hash tag's slot."""
    if isinstance(client, redis.RedisCluster):
        node = client.get_node_from_key(rk.tenant_available(tenant_id))
        return f"redis://{node.host}:{node.port}/0"
    return str(settings.REDIS_URL)


async def _round(tenant_id: int, url: str) -> list[int]:
    clients = [aredis.Redis.from_url(url) for _ in range(20)]
    try:
        return await asyncio.gather(*(_admit(clients[n % 20], tenant_id, n) for n in range(CONCURRENT)))
    finally:
        for client in clients:
            await client.aclose()


@pytest.mark.django_db(transaction=True)
def test_200_concurrent_holds_against_a_balance_for_50_admit_exactly_50_twenty_times(tenant, redis_client):
    for round_no in range(20):
        for name in (rk.tenant_available(tenant.pk), rk.tenant_holds(tenant.pk), rk.tenant_hold_expiries(tenant.pk)):
            redis_client.delete(name)
        redis_client.set(rk.tenant_available(tenant.pk), HOLD * COVERED)
        codes = asyncio.run(_round(tenant.pk, _slot_owner_url(redis_client, tenant.pk)))
        assert codes.count(0) == COVERED, round_no
        assert codes.count(8) == CONCURRENT - COVERED  # 8 = insufficient_balance (402)
        assert int(redis_client.get(rk.tenant_available(tenant.pk))) == 0
        assert redis_client.hlen(rk.tenant_holds(tenant.pk)) == COVERED


@pytest.mark.django_db(transaction=True)
def test_avail_is_initialised_from_the_ledger_and_moved_by_top_ups(tenant, redis_client):
    assert tenant_available_ensure(tenant=tenant)
    assert int(redis_client.get(rk.tenant_available(tenant.pk))) == 0
    balance_topup(tenant=tenant, amount_micros=7_000_000, idempotency_key="topup:a", source="stripe")
    balance_topup(tenant=tenant, amount_micros=7_000_000, idempotency_key="topup:a", source="stripe")
    assert int(redis_client.get(rk.tenant_available(tenant.pk))) == 7_000_000


@pytest.mark.django_db(transaction=True)
def test_postpaid_tenant_may_hold_up_to_its_credit_limit(tenant, redis_client):
    tenant.billing_mode, tenant.credit_limit_micros = "postpaid", 100_000
    tenant.save()
    tenant_available_ensure(tenant=tenant)
    assert hold_place(redis_client, tenant_id=tenant.pk, hold_id="a", amount_micros=100_000, ttl_s=60)
    assert not hold_place(redis_client, tenant_id=tenant.pk, hold_id="b", amount_micros=1, ttl_s=60)


def test_settle_and_reaper_release_each_hold_exactly_once(redis_client):
    redis_client.set(rk.tenant_available(9), 1_000)
    assert hold_place(redis_client, tenant_id=9, hold_id="live", amount_micros=400, ttl_s=60)
    assert hold_place(redis_client, tenant_id=9, hold_id="stranded", amount_micros=300, ttl_s=-1)
    assert int(redis_client.get(rk.tenant_available(9))) == 300
    assert holds_reap(redis_client) == 1  # only the expired one
    assert holds_reap(redis_client) == 0
    assert not hold_settle(redis_client, tenant_id=9, hold_id="stranded", charge_micros=100)  # late settle: no-op
    assert hold_settle(redis_client, tenant_id=9, hold_id="live", charge_micros=150)
    assert not hold_settle(redis_client, tenant_id=9, hold_id="live", charge_micros=150)
    assert int(redis_client.get(rk.tenant_available(9))) == 1_000 - 150
    assert holds_open_micros(redis_client, tenant_id=9) == 0
    assert redis_client.zcard(rk.tenant_hold_expiries(9)) == 0


@pytest.mark.django_db(transaction=True)
def test_the_reap_task_walks_the_tenants_in_postgresql(tenant, redis_client):
    from metering.tasks import holds_reap_task

    unknown = tenant.pk + 1_000  # a tenant id PostgreSQL does not have
    for tenant_id in (tenant.pk, unknown):
        redis_client.set(rk.tenant_available(tenant_id), 500)
        assert hold_place(redis_client, tenant_id=tenant_id, hold_id="stranded", amount_micros=200, ttl_s=-1)
    assert holds_reap_task() == 1
    assert int(redis_client.get(rk.tenant_available(tenant.pk))) == 500
    assert int(redis_client.get(rk.tenant_available(unknown))) == 300  # not walked
