"""Switching a tenant to postpaid (or changing its credit) reaches the gateway's balance counter at once."""

from __future__ import annotations

import pytest
from django.conf import settings

from contracts.redis_keys import tenant_available
from metering.holds import hold_place, hold_settle
from metering.services import tenant_available_ensure
from tenants.models import Tenant
from tenants.services import tenant_update

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.cluster]


def _avail(redis_client, tenant) -> int:
    return int(redis_client.get(tenant_available(tenant.pk)))


def test_switching_to_postpaid_lets_the_next_request_through_without_a_reconciliation_run(tenant, redis_client):
    tenant_available_ensure(tenant=tenant)
    assert not hold_place(redis_client, tenant_id=tenant.pk, hold_id="h0", amount_micros=1_000, ttl_s=60)  # 402
    tenant_update(tenant=tenant, credit_limit_micros=5_000_000)  # prepaid: the credit limit lends nothing yet
    assert _avail(redis_client, tenant) == 0
    tenant_update(tenant=tenant, billing_mode="postpaid")
    assert _avail(redis_client, tenant) == 5_000_000
    assert hold_place(redis_client, tenant_id=tenant.pk, hold_id="h1", amount_micros=1_000, ttl_s=60)


def test_a_hold_in_flight_is_kept_across_the_switch_back(tenant, redis_client):
    tenant_update(tenant=tenant, billing_mode="postpaid", credit_limit_micros=2_000_000)
    tenant_available_ensure(tenant=tenant)
    assert hold_place(redis_client, tenant_id=tenant.pk, hold_id="h", amount_micros=300_000, ttl_s=60)
    tenant_update(tenant=tenant, credit_limit_micros=3_000_000)
    assert _avail(redis_client, tenant) == 3_000_000 - 300_000
    tenant_update(tenant=tenant, billing_mode="prepaid")
    assert _avail(redis_client, tenant) == -300_000  # the request in flight still holds its reservation
    assert hold_settle(redis_client, tenant_id=tenant.pk, hold_id="h", charge_micros=0)
    assert _avail(redis_client, tenant) == 0


def test_the_billing_api_switch_is_published_by_the_service(tenant, redis_client, api_client_for):
    from tests.factories import MembershipFactory

    Tenant.objects.filter(
        pk=tenant.pk
    ).update(  # staff-set limit; a card on file (tests/metering/test_postpaid_billing.py)
        credit_limit_micros=1_000_000, stripe_customer_id="cus_on_file", stripe_payment_method_id="pm_on_file"
    )
    tenant.refresh_from_db()
    tenant_available_ensure(tenant=tenant)
    billing = MembershipFactory(tenant=tenant, role="billing")
    response = api_client_for(billing).patch("/api/v1/tenants/acme/", {"billing_mode": "postpaid"}, format="json")
    assert response.status_code == 200
    assert _avail(redis_client, tenant) == 1_000_000
    assert settings.REDIS_URL  # the counter lives in the real Redis the gateway reads


def test_postpaid_usage_is_billed_through_the_stripe_meter_only(tenant, redis_client):
    """ONE path: Stripe Billing from meter events. No invoice of our own can bill the same usage again."""
    from metering import beat, billing, tasks
    from metering.ingest import usage_ingest
    from metering.models import MeterEvent
    from metering.stripe import client as stripe_client
    from tests.metering.conftest import make_event

    tenant_update(tenant=tenant, billing_mode="postpaid", credit_limit_micros=1_000_000)
    Tenant.objects.filter(pk=tenant.pk).update(stripe_customer_id="cus_one_path")
    usage_ingest(events=[make_event(tenant.pk, request_id="req_metered")])
    assert list(MeterEvent.objects.values_list("identifier", "customer_id", "value")) == [
        ("req_metered", "cus_one_path", 5_200)
    ]
    tasks_scheduled = {entry["task"] for entry in beat.BEAT_SCHEDULE.values()}
    assert "metering.tasks.stripe_meter_push" in tasks_scheduled
    assert not [name for name in tasks_scheduled if "invoice" in name]
    for module in (billing, stripe_client, tasks):
        assert not [name for name in vars(module) if "invoice" in name.lower()], module.__name__
