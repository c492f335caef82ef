"""A credit (Stripe webhook, demo, promotion) reaches open consoles at once, like usage does."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from contracts.redis_keys import tenant_group
from metering.services import balance_topup


async def _drain(layer, channel: str) -> list[dict]:
    messages = []
    while True:
        try:
            messages.append(await asyncio.wait_for(layer.receive(channel), 1.0))
        except TimeoutError:
            return messages


@pytest.mark.django_db(transaction=True)
def test_a_credit_pushes_the_new_balance_to_the_tenants_console_group_once(tenant, redis_client):
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(tenant_group(tenant.pk), channel)

    assert balance_topup(tenant=tenant, amount_micros=5_000_000, idempotency_key="promo:1", source="promotion")
    # The same credit again is not applied, so nothing is pushed for it.
    assert not balance_topup(tenant=tenant, amount_micros=5_000_000, idempotency_key="promo:1", source="promotion")
    assert balance_topup(tenant=tenant, amount_micros=1_000_000, idempotency_key="promo:2", source="promotion")

    messages = async_to_sync(_drain)(layer, channel)
    assert [m["type"] for m in messages] == ["billing.update", "billing.update"]
    assert [m["balance_micros"] for m in messages] == [5_000_000, 6_000_000]


def test_a_push_from_a_thread_that_runs_an_event_loop_still_arrives(redis_client):
    from metering.console_push import tenant_push

    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(tenant_group(41), channel)

    async def push_from_async_code() -> None:
        tenant_push(tenant_id=41, payload={"balance_micros": 7})

    asyncio.run(push_from_async_code())
    assert [m["balance_micros"] for m in async_to_sync(_drain)(layer, channel)] == [7]
