"""The meter-event emulator speaks Stripe's wire format; the pusher sends postpaid usage exactly once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests
import stripe

from metering.ingest import usage_ingest
from metering.models import MeterEvent, MeterStatus
from metering.reconcile import check_meter_totals
from metering.stripe.client import MeterEventOut, meter_client, meter_events_send
from metering.stripe.meter_push import meter_events_push
from tests.metering.conftest import emulator_totals, make_event


def _event(identifier: str, value: int = 10, when: datetime | None = None) -> MeterEventOut:
    return MeterEventOut(identifier, "cus_A", value, when or datetime.now(tz=UTC))


def _config(base: str, **values) -> None:
    requests.post(f"{base}/_emulator/config", json=values, timeout=5).raise_for_status()


def test_identifiers_are_deduplicated_and_v1_endpoint_counts_too(meter_emulator, redis_client):
    meter_events_send(events=[_event("a"), _event("b")], idempotency_key="k1")
    meter_events_send(events=[_event("a"), _event("c")], idempotency_key="k2")
    meter_client().v1.billing.meter_events.create(
        params={
            "event_name": "tokenway_usage",
            "identifier": "d",
            "payload": {"stripe_customer_id": "cus_A", "value": "5"},
        },
        options={"idempotency_key": "k3"},
    )
    totals = emulator_totals(meter_emulator)
    assert totals["customers"] == {"cus_A": 35}
    assert totals["duplicates"] == 1


def test_timestamp_window_rate_limit_and_session_expiry(meter_emulator, redis_client):
    with pytest.raises(stripe.InvalidRequestError):
        meter_events_send(events=[_event("old", when=datetime.now(tz=UTC) - timedelta(days=40))], idempotency_key="o")
    with pytest.raises(stripe.InvalidRequestError):
        meter_events_send(
            events=[_event("future", when=datetime.now(tz=UTC) + timedelta(minutes=10))], idempotency_key="f"
        )
    # the emulator's clock moves 1.1 s: the earlier requests leave the one-second window, no session expires
    _config(meter_emulator, rate_limit_per_s=1, clock_offset_s=1.1)
    meter_events_send(events=[_event("r1")], idempotency_key="r1")
    client = meter_client()
    token = redis_client.get("tw:stripe:meter_session").decode()
    body: dict[str, Any] = {
        "events": [{"event_name": "x", "identifier": "r2", "payload": {"stripe_customer_id": "c", "value": "1"}}]
    }
    response = requests.post(
        f"{meter_emulator}/v2/billing/meter_event_stream",
        json=body,
        headers={"Authorization": f"Bearer {token}"},
        timeout=5,
    )
    assert response.status_code == 429
    _config(meter_emulator, rate_limit_per_s=1000, clock_offset_s=16 * 60)  # sessions last 15 minutes
    response = requests.post(
        f"{meter_emulator}/v2/billing/meter_event_stream",
        json=body,
        headers={"Authorization": f"Bearer {token}"},
        timeout=5,
    )
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "billing_meter_event_session_expired"
    # The pusher renews an expired session by itself.
    meter_events_send(events=[_event("after-expiry")], idempotency_key="ae")
    assert client is meter_client()


@pytest.mark.django_db(transaction=True)
def test_postpaid_usage_reaches_the_meter_once_and_totals_reconcile(meter_emulator, tenant, redis_client):
    tenant.billing_mode, tenant.credit_limit_micros, tenant.stripe_customer_id = "postpaid", 10**9, "cus_acme"
    tenant.save()
    events = [make_event(tenant.pk) for _ in range(250)]
    usage_ingest(events=events)
    assert meter_events_push().sent == 250
    MeterEvent.objects.filter(identifier__in=[e.request_id for e in events[:40]]).update(status=MeterStatus.PENDING)
    assert meter_events_push().sent == 40  # resent after a lost "sent" mark: deduplicated by Stripe
    assert emulator_totals(meter_emulator)["customers"] == {"cus_acme": 250 * 5_200}
    assert check_meter_totals() == []


@pytest.mark.django_db(transaction=True)
def test_rows_past_the_dedup_window_are_never_resent(meter_emulator, tenant, redis_client):
    tenant.billing_mode, tenant.stripe_customer_id = "postpaid", "cus_acme"
    tenant.save()
    usage_ingest(events=[make_event(tenant.pk, request_id="req_late")])
    MeterEvent.objects.update(first_attempt_at=datetime.now(tz=UTC) - timedelta(hours=23, minutes=5))
    result = meter_events_push()
    assert (result.sent, result.expired) == (0, 1)
    assert emulator_totals(meter_emulator)["events"] == 0
    assert [f.check for f in check_meter_totals()] == ["meter_expired"]
