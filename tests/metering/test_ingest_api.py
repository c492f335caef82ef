from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from rest_framework.test import APIClient

from apikeys.services import api_key_issue
from contracts.redis_keys import USAGE_GROUP, USAGE_STREAM, generation, tenant_group
from metering.consumer import DEAD_LETTER_STREAM, UsageConsumer
from metering.models import Journal, Notification, SpendAlert, UsageRecord
from tests.metering.conftest import make_event

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.cluster, pytest.mark.local_servers]


@pytest.fixture
def issued(tenant):
    return api_key_issue(tenant=tenant, created_by=None, name="ci", monthly_budget_micros=9_000_000)


def _client(plaintext: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    return client


def _xadd(redis_client, events):
    for event in events:
        redis_client.xadd(USAGE_STREAM, {"e": event.to_json()})


def test_consumer_ingests_acks_and_ignores_redelivery(tenant, redis_client):
    events = [make_event(tenant.pk) for _ in range(30)]
    _xadd(redis_client, events + events[:5])  # the gateway retried five XADDs
    redis_client.xadd(USAGE_STREAM, {"e": b"{not json"})
    consumer = UsageConsumer(client=redis_client, name="t1")
    handled = consumer.run(until=__import__("time").monotonic() + 1.5, block_ms=50)
    assert handled == 36
    assert UsageRecord.objects.count() == 30
    assert Journal.objects.filter(kind="usage").count() == 30
    assert redis_client.xpending(USAGE_STREAM, USAGE_GROUP)["pending"] == 0
    assert redis_client.xlen(DEAD_LETTER_STREAM) == 1


def test_generation_comes_from_redis_before_ingestion_and_postgres_after(tenant, redis_client, issued):
    event = make_event(tenant.pk, issued.api_key.pk, request_id="req_gen")
    redis_client.set(generation("req_gen"), event.to_json(), ex=600)
    client = _client(issued.plaintext)
    before = client.get("/api/v1/generation", {"id": "req_gen"})
    assert before.status_code == 200
    assert before.json()["ingested"] is False
    assert before.json()["tokens"]["cache_read"] == 800
    from metering.ingest import usage_ingest

    usage_ingest(events=[event])
    after = client.get("/api/v1/generation", {"id": "req_gen"}).json()
    assert after["ingested"] is True
    assert after["charge_micros"] == event.charge_micros
    assert after["provider"] == "deepseek" and after["region"] == "beijing"
    assert after["route_reason"] == "cheapest healthy"
    assert after["cache"]["saved_micros"] == 800 * 2 - 800 // 2  # full input minus cache-read price, micros
    assert after["timings"]["ttft_ms"] == 220.0


def test_generation_of_another_tenant_is_404_in_the_error_shape(tenant, other_tenant, redis_client, issued):
    from metering.ingest import usage_ingest

    foreign = make_event(other_tenant.pk, request_id="req_foreign")
    usage_ingest(events=[foreign])
    redis_client.set(generation("req_foreign2"), make_event(other_tenant.pk, request_id="req_foreign2").to_json())
    client = _client(issued.plaintext)
    for rid in ("req_foreign", "req_foreign2", "req_unknown"):
        response = client.get("/api/v1/generation", {"id": rid})
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"
    assert APIClient().get("/api/v1/generation", {"id": "req_foreign"}).status_code in (401, 403)


def test_current_key_shows_limits_spend_and_balance(tenant, redis_client, issued):
    from metering.ingest import usage_ingest
    from metering.services import balance_topup

    balance_topup(tenant=tenant, amount_micros=10_000_000, idempotency_key="topup:t1", source="stripe")
    usage_ingest(events=[make_event(tenant.pk, issued.api_key.pk) for _ in range(3)])
    body = _client(issued.plaintext).get("/api/v1/key").json()
    assert body["key"]["limits"]["monthly_budget_micros"] == 9_000_000
    assert body["key"]["spend_this_month_micros"] == 3 * 5_200
    assert body["tenant"]["balance_micros"] == 10_000_000 - 3 * 5_200


def test_console_group_gets_balance_after_each_batch(tenant, redis_client):
    tenant.billing_mode = "postpaid"  # owed: a prepaid balance would stop at zero (test_shortfall)
    tenant.save()
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(tenant_group(tenant.pk), channel)
    _xadd(redis_client, [make_event(tenant.pk, request_id="req_live")])
    UsageConsumer(client=redis_client, name="t2").run(until=__import__("time").monotonic() + 0.5, block_ms=50)
    message = async_to_sync(layer.receive)(channel)
    assert message["type"] == "billing.update"
    assert message["balance_micros"] == -5_200
    assert message["request_ids"] == ["req_live"]


def test_spend_alert_fires_once_per_month_to_console_and_email(tenant, redis_client, mailoutbox):
    SpendAlert.objects.create(tenant=tenant, threshold_micros=10_000, email="billing@acme.test")
    consumer = UsageConsumer(client=redis_client, name="t3")
    for _ in range(3):
        _xadd(redis_client, [make_event(tenant.pk)])
        consumer.run(until=__import__("time").monotonic() + 0.3, block_ms=50)
    assert Notification.objects.filter(tenant=tenant, kind="spend_alert").count() == 1
    assert len(mailoutbox) == 1


def test_tenant_usage_csv_export_for_members_only(tenant, owner, outsider, api_client_for):
    from metering.ingest import usage_ingest

    usage_ingest(events=[make_event(tenant.pk, key_id=5) for _ in range(4)])
    response = api_client_for(owner).get("/api/v1/tenants/acme/usage.csv", {"group": "key"})
    assert response.status_code == 200
    lines = response.content.decode().strip().splitlines()
    assert lines[0].startswith("key,requests")
    assert lines[1].startswith("5,4,")
    assert api_client_for(outsider).get("/api/v1/tenants/acme/usage.csv").status_code == 404
    by_model = api_client_for(owner).get("/api/v1/tenants/acme/usage/", {"group": "model"}).json()
    assert by_model["data"][0]["model"] == "deepseek-v4-flash"


@pytest.mark.parametrize(
    "params",
    [
        {"end": "0001-01-01"},
        {"start": "0001-01-01"},
        {"start": "9999-12-31"},
        {"start": "2026-05-01", "end": "2026-04-01"},
    ],
)
def test_usage_dates_out_of_range_are_400_not_500(tenant, owner, api_client_for, params):
    for path in ("/api/v1/tenants/acme/usage/", "/api/v1/tenants/acme/usage.csv"):
        response = api_client_for(owner).get(path, params)
        assert response.status_code == 400, (path, params, response.content[:200])
        assert response.json()["error"]["param"] in ("start", "end")
