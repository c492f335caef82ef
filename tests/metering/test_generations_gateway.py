"""Through the real gateway, the simulated providers and the metering consumer: refused calls (402, 429)
land in ``/api/v1/generations`` as ``rejected`` with their reason and never touch the ledger; the key's
``last_used_at`` moves when its requests are ingested."""

from __future__ import annotations

import time
from typing import Any

import pytest
import requests
from rest_framework.test import APIClient

from metering.consumer import UsageConsumer
from metering.ledger import tenant_account_balance
from metering.models import Journal, UsageRecord
from metering.reconcile import check_usage_has_journal
from metering.services import balance_topup, tenant_available_ensure
from tests.factories import issue_key
from tests.routing.conftest import gateway, gateway_server, sim  # noqa: F401 - the gateway fixtures

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.cluster]

BODY: dict[str, Any] = {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 5}


def _call(gateway, plaintext: str) -> requests.Response:  # noqa: F811 - the fixture's value, not the fixture
    return requests.post(
        f"{gateway.base_url}/v1/chat/completions",
        json=BODY,
        headers={"authorization": f"Bearer {plaintext}"},
        timeout=20,
    )


def _ingest(redis_client, expected: int) -> None:
    consumer = UsageConsumer(client=redis_client, name="generations-test", after_batch=lambda _: None)
    deadline = time.monotonic() + 10
    while UsageRecord.objects.count() < expected and time.monotonic() < deadline:
        consumer.run(until=time.monotonic() + 0.3, block_ms=50)
    assert UsageRecord.objects.count() == expected


def _listed(plaintext: str) -> list[dict]:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    response = client.get("/api/v1/generations")
    assert response.status_code == 200
    return response.json()["data"]


def test_402_and_429_are_listed_as_rejected_and_leave_the_ledger_alone(gateway, tenant, redis_client):  # noqa: F811
    balance_topup(tenant=tenant, amount_micros=5_000_000, idempotency_key="topup:gen", source="stripe")
    tenant_available_ensure(tenant=tenant)
    tight, tight_plain = issue_key(tenant, name="tight", rpm_limit=1)
    broke, broke_plain = issue_key(tenant, name="broke", monthly_budget_micros=1)
    assert tight.last_used_at is None
    ok = _call(gateway, tight_plain)
    limited = _call(gateway, tight_plain)
    refused = _call(gateway, broke_plain)
    assert (ok.status_code, limited.status_code, refused.status_code) == (200, 429, 402)
    _ingest(redis_client, 3)
    journals = set(Journal.objects.filter(kind="usage").values_list("key", flat=True))
    assert journals == {f"usage:{ok.headers['request-id']}"}  # only the answered call moved money
    charged = UsageRecord.objects.get(request_id=ok.headers["x-request-id"]).charge_micros
    assert charged > 0 and tenant_account_balance(tenant_id=tenant.pk) == 5_000_000 - charged
    newest, oldest = _listed(tight_plain)
    assert (newest["id"], newest["status"], newest["http_status"], newest["error_code"]) == (
        limited.headers["request-id"],
        "rejected",
        429,
        "key_rate_limited",
    )
    assert newest["charge_micros"] == 0 and newest["tokens"]["output"] == 0
    assert (oldest["id"], oldest["status"]) == (ok.headers["request-id"], "ok")
    [budget] = _listed(broke_plain)
    assert (budget["id"], budget["status"], budget["http_status"], budget["error_code"]) == (
        refused.headers["request-id"],
        "rejected",
        402,
        "key_budget_exceeded",
    )
    assert check_usage_has_journal() == []
    tight.refresh_from_db()
    broke.refresh_from_db()
    assert tight.last_used_at is not None and broke.last_used_at is not None
    assert tight.last_used_at == UsageRecord.objects.get(request_id=limited.headers["request-id"]).finished_at
