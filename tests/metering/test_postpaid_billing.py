"""Postpaid that bills (docs/billing.md, "Postpaid: a card on file, and usage Stripe has not taken").

The switch needs a Stripe customer with a payment method (the stripe library against localstripe); usage of a
postpaid tenant reaches the meter emulator; meter events Stripe has not taken after ``UNSENT_MAX_AGE`` are a
reconciliation finding and an operator alert.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core import mail
from django.utils import timezone

from contracts.redis_keys import tenant_available
from devtools.ports import free_port
from metering.ingest import usage_ingest
from metering.ledger import tenant_account_balance
from metering.models import MeterEvent, MeterStatus
from metering.reconcile import check_meter_events_unsent
from metering.services import tenant_available_ensure
from metering.stripe.client import clients_reset, stripe_client
from metering.stripe.meter_health import UNSENT_MAX_AGE
from metering.stripe.meter_push import meter_events_push
from outbox.models import OutboxRow
from tenants.models import Tenant
from tenants.services import tenant_update
from tests.factories import MembershipFactory
from tests.metering.conftest import emulator_totals, make_event

pytestmark = pytest.mark.django_db(transaction=True)
URL = "/api/v1/tenants/acme/billing/postpaid"
CREDIT = 5_000_000


@pytest.fixture
def billing_client(tenant, api_client_for, redis_client):
    Tenant.objects.filter(pk=tenant.pk).update(credit_limit_micros=CREDIT)  # staff-set
    tenant.refresh_from_db()
    tenant_available_ensure(tenant=tenant)
    return api_client_for(MembershipFactory(tenant=tenant, role="billing"))


def _state(tenant, redis_client) -> tuple[Any, ...]:
    row = Tenant.objects.get(pk=tenant.pk)
    avail = redis_client.get(tenant_available(tenant.pk))
    return row.billing_mode, row.stripe_payment_method_id, OutboxRow.objects.count(), avail


def _error(response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == code
    return error


def test_switching_to_postpaid_without_a_card_on_file_is_refused_and_nothing_changes(
    tenant, billing_client, redis_client
):
    before = _state(tenant, redis_client)
    response = billing_client.patch("/api/v1/tenants/acme/", {"billing_mode": "postpaid"}, format="json")
    error = _error(response, 409, "payment_method_required")
    assert error["param"] == "billing_mode" and "/billing/postpaid" in error["message"]
    assert _state(tenant, redis_client) == before == ("prepaid", "", before[2], b"0")


def test_enabling_postpaid_creates_the_customer_attaches_the_card_and_the_usage_reaches_stripe(
    tenant, billing_client, redis_client, localstripe, meter_emulator
):
    response = billing_client.post(URL, {"payment_method": "pm_card_visa"}, format="json")
    assert response.status_code == 200, response.content
    tenant.refresh_from_db()
    assert tenant.billing_mode == "postpaid" and tenant.stripe_customer_id.startswith("cus_")
    assert response.json() == {
        "billing_mode": "postpaid",
        "credit_limit_micros": CREDIT,
        "payment_method": tenant.stripe_payment_method_id,
    }
    customer = stripe_client().v1.customers.retrieve(tenant.stripe_customer_id)
    assert customer.invoice_settings.default_payment_method == tenant.stripe_payment_method_id
    assert int(redis_client.get(tenant_available(tenant.pk))) == CREDIT  # the gateway lends the credit at once

    usage_ingest(events=[make_event(tenant.pk, request_id="req_postpaid_1")])
    assert meter_events_push().sent == 1
    assert emulator_totals(meter_emulator)["customers"] == {tenant.stripe_customer_id: 5_200}
    assert tenant_account_balance(tenant_id=tenant.pk) == -5_200  # owed, billed by Stripe from the meter
    assert check_meter_events_unsent() == []
    # Already postpaid, back to prepaid and again: the card on file makes the PATCH a plain switch.
    for mode in ("postpaid", "prepaid", "postpaid"):
        assert billing_client.patch("/api/v1/tenants/acme/", {"billing_mode": mode}, format="json").status_code == 200
    assert Tenant.objects.get(pk=tenant.pk).billing_mode == "postpaid"


@pytest.mark.parametrize(
    ("payment_method", "status", "code"),
    [
        ("pm_card_visa_chargeDeclined", 402, "payment_method_declined"),
        ("pm_doesnotexist", 400, "payment_method_invalid"),
        ("card_not_a_pm", 400, "invalid"),
    ],
)
def test_a_card_stripe_refuses_leaves_the_tenant_prepaid(
    tenant, billing_client, redis_client, localstripe, payment_method, status, code
):
    before = _state(tenant, redis_client)
    response = billing_client.post(URL, {"payment_method": payment_method}, format="json")
    assert _error(response, status, code)["param"] == "payment_method"
    assert _state(tenant, redis_client) == before


def test_stripe_unreachable_is_a_503_and_nothing_changes(tenant, billing_client, redis_client, settings):
    settings.STRIPE_API_BASE, settings.STRIPE_API_KEY = f"http://127.0.0.1:{free_port()}", "sk_test_down"
    clients_reset()
    try:
        before = _state(tenant, redis_client)
        _error(billing_client.post(URL, {"payment_method": "pm_card_visa"}, format="json"), 503, "stripe_unavailable")
        assert _state(tenant, redis_client) == before
        assert Tenant.objects.get(pk=tenant.pk).stripe_customer_id == ""
    finally:
        clients_reset()


def test_a_developer_may_not_switch_billing(tenant, developer, api_client_for, redis_client, billing_client):
    before = _state(tenant, redis_client)
    response = api_client_for(developer).post(URL, {"payment_method": "pm_card_visa"}, format="json")
    _error(response, 403, "permission_denied")
    assert _state(tenant, redis_client) == before


def _age(identifier: str, by: timedelta) -> None:
    MeterEvent.objects.filter(identifier=identifier).update(created_at=timezone.now() - by)


def test_meter_events_stripe_has_not_taken_are_a_finding_and_one_operator_alert(tenant, redis_client, settings):
    """A tenant made postpaid by an operator without a Stripe customer: its usage cannot be sent."""
    settings.ADMINS = [("Ops", "ops@tokenway.test")]
    tenant_update(tenant=tenant, billing_mode="postpaid", credit_limit_micros=CREDIT)
    usage_ingest(events=[make_event(tenant.pk, request_id="req_unsendable")])
    meter_events_push()
    assert check_meter_events_unsent() == [] and mail.outbox == []  # young: not yet stuck
    _age("req_unsendable", UNSENT_MAX_AGE + timedelta(seconds=1))
    [finding] = check_meter_events_unsent()
    assert (finding.check, finding.severity, finding.subject) == ("meter_events_unsent", "error", "tenant:acme")
    assert finding.detail["reason"] == "no_stripe_customer" and finding.detail["count"] == 1
    assert finding.detail["value_micros"] == 5_200 and finding.detail["oldest_age_s"] >= UNSENT_MAX_AGE.seconds
    meter_events_push()  # the pusher raises the same alert: sent once within the hour
    [alert] = mail.outbox
    assert "meter_events_unsent" in alert.subject and "acme" in alert.subject and alert.to == ["ops@tokenway.test"]
    assert MeterEvent.objects.get().status == MeterStatus.PENDING  # kept: sent once a customer exists


def test_a_failing_stripe_meter_is_reported_with_its_reason(tenant, redis_client, settings):
    settings.STRIPE_METER_API_BASE, settings.STRIPE_API_KEY = f"http://127.0.0.1:{free_port()}", "sk_test_down"
    clients_reset()
    try:
        tenant_update(tenant=tenant, billing_mode="postpaid")
        Tenant.objects.filter(pk=tenant.pk).update(stripe_customer_id="cus_failing")
        usage_ingest(events=[make_event(tenant.pk, request_id="req_failing")])
        assert meter_events_push().failed == 1
        _age("req_failing", UNSENT_MAX_AGE + timedelta(minutes=1))
        [finding] = check_meter_events_unsent()
        assert finding.detail["reason"] == "stripe_failing"
    finally:
        clients_reset()


def test_without_stripe_configured_the_switch_is_a_409_and_nothing_changes(
    tenant, billing_client, redis_client, settings
):
    settings.STRIPE_API_KEY = ""
    before = _state(tenant, redis_client)
    response = billing_client.post(URL, {"payment_method": "pm_card_visa"}, format="json")
    _error(response, 409, "stripe_not_configured")
    assert _state(tenant, redis_client) == before and Tenant.objects.get(pk=tenant.pk).stripe_customer_id == ""


def test_usage_never_sent_within_stripes_dedupe_window_is_reported_as_expired(tenant, redis_client):
    """An expired row's usage happened a day ago: outside the meter totals' one-hour window, still unbilled."""
    tenant_update(tenant=tenant, billing_mode="postpaid")
    Tenant.objects.filter(pk=tenant.pk).update(stripe_customer_id="cus_expired")
    usage_ingest(events=[make_event(tenant.pk, request_id="req_expired")])
    a_day_ago = timezone.now() - timedelta(hours=24)
    MeterEvent.objects.update(timestamp=a_day_ago, created_at=a_day_ago, first_attempt_at=a_day_ago)
    assert meter_events_push().expired == 1
    [finding] = check_meter_events_unsent()
    assert (finding.detail["reason"], finding.detail["count"], finding.detail["value_micros"]) == ("expired", 1, 5_200)
