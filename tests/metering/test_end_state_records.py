"""End states in the books and the generation record: only a delivered or abandoned answer is charged
(even when metering recomputes a charge), the provider cost is booked in every state, and the record
carries the end state, finish reason and provider response id. Tenants see their charge only; staff see
the provider cost and the margin of a request."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from rest_framework.test import APIClient

from contracts.usage import Tokens
from metering.ingest import usage_ingest
from metering.ledger import tenant_account_balance
from metering.models import AccountKind, JournalLine, UsageRecord
from metering.services import balance_topup
from tests.factories import issue_key
from tests.metering.conftest import make_event

pytestmark = [pytest.mark.django_db, pytest.mark.local_servers]
COST_FIELDS = {
    "cost_micros",
    "provider_cost_micros",
    "computed_cost_micros",
    "reported_cost_micros",
    "margin_micros",
    "cost",
}
TOPUP = 5_000_000


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def _provider_cost(request_id: str) -> int:
    line = JournalLine.objects.get(journal__key=f"usage:{request_id}", account__kind=AccountKind.PROVIDER_COST)
    return line.amount_micros


@pytest.fixture
def funded(tenant):
    balance_topup(tenant=tenant, amount_micros=TOPUP, idempotency_key="topup:end-states", source="stripe")
    key, plaintext = issue_key(tenant, name="app")
    return tenant, key, plaintext


@pytest.mark.parametrize("state", ["upstream_cut", "upstream_timeout", "gateway_error", "client_gone_before_answer"])
def test_a_broken_answer_is_never_charged_even_when_metering_recomputes_the_charge(funded, state):
    tenant, key, _ = funded
    # The gateway's cost disagrees with the snapshot (cost_recomputed), and it claimed a charge: both ignored.
    event = make_event(tenant.pk, key.pk, request_id=f"req_{state}", end_state=state, cost_micros=1, charge_micros=99)
    usage_ingest(events=[event])
    record = UsageRecord.objects.get(request_id=event.request_id)
    assert record.charge_micros == 0 and "not_charged" in record.flags and "cost_recomputed" in record.flags
    assert record.cost_micros > 0 and _provider_cost(event.request_id) == record.cost_micros  # provider still paid
    assert tenant_account_balance(tenant_id=tenant.pk) == TOPUP


@pytest.mark.parametrize("state", ["completed", "client_cancelled", ""])
def test_a_delivered_or_abandoned_answer_is_charged(funded, state):
    tenant, key, _ = funded
    event = make_event(tenant.pk, key.pk, request_id=f"req_charged_{state or 'old'}", end_state=state)
    usage_ingest(events=[event])
    record = UsageRecord.objects.get(request_id=event.request_id)
    assert record.charge_micros == event.charge_micros > 0 and record.end_state == state
    assert tenant_account_balance(tenant_id=tenant.pk) == TOPUP - event.charge_micros


def test_the_record_carries_end_state_finish_reason_and_upstream_id_without_provider_cost(funded):
    tenant, key, plaintext = funded
    tokens = Tokens(input_uncached=100, cache_write_5m=300, cache_write_1h=700, output=90, reasoning=40)
    event = make_event(
        tenant.pk,
        key.pk,
        request_id="req_record",
        tokens=tokens,
        end_state="client_cancelled",
        finish_reason="length",
        upstream_id="msg_01abc",
    )
    usage_ingest(events=[event])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    body = client.get("/api/v1/generation", {"id": "req_record"}).json()
    assert (body["end_state"], body["finish_reason"], body["upstream_id"]) == (
        "client_cancelled",
        "length",
        "msg_01abc",
    )
    assert body["tokens"] == {
        "input_uncached": 100, "cache_read": 0, "cache_write_5m": 300, "cache_write_1h": 700, "output": 90,
        "reasoning": 40,
    }  # fmt: skip
    assert body["charge_micros"] == event.charge_micros and not _keys(body) & COST_FIELDS
    [listed] = client.get("/api/v1/generations").json()["data"]
    assert listed["end_state"] == "client_cancelled" and not _keys(listed) & COST_FIELDS


def test_the_console_request_page_shows_the_record_and_no_provider_cost(funded, owner, client):
    tenant, key, _ = funded
    event = make_event(
        tenant.pk,
        key.pk,
        request_id="req_page",
        end_state="upstream_cut",
        finish_reason="stop",
        upstream_id="chatcmpl-xyz",
    )
    usage_ingest(events=[event])
    client.force_login(owner.user)
    page = client.get(reverse("frontend:request", args=[tenant.slug, "req_page"]))
    html = page.content.decode()
    assert page.status_code == 200 and "upstream_cut" in html and "chatcmpl-xyz" in html
    assert not any(name in html for name in COST_FIELDS - {"cost"})
    cost = UsageRecord.objects.get(request_id="req_page").cost_micros
    assert f"{cost / 1_000_000:.6f}" not in html  # the provider cost's amount is nowhere on the page


def test_staff_see_a_requests_provider_cost_and_margin_members_do_not(funded, owner, client):
    tenant, key, _ = funded
    event = make_event(tenant.pk, key.pk, request_id="req_staff", markup_bps=2_000, end_state="completed")
    usage_ingest(events=[event])
    url = reverse("frontend:ops-request", args=["req_staff"])
    client.force_login(owner.user)
    assert client.get(url).status_code == 404  # an organisation owner is not staff
    staff = get_user_model().objects.create_user(email="ops@tokenway.test", password="x", is_staff=True)
    client.force_login(staff)
    page = client.get(url)
    assert page.status_code == 200
    record = page.context["r"]
    assert record["cost_micros"] == event.cost_micros and record["charge_micros"] == event.charge_micros
    assert record["margin_micros"] == event.charge_micros - event.cost_micros > 0
    assert client.get(reverse("frontend:ops-request", args=["req_missing"])).status_code == 404
