"""Stripe through the official library against localstripe, and webhook verification/dedupe."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any

import pytest
import requests

from metering.billing import customer_ensure, topup_start
from metering.checks import stripe_webhook_secret_check
from metering.models import Journal, StripeEvent, TopUp, TopUpStatus
from metering.selectors import tenant_invoices
from metering.services import tenant_spendable_micros
from metering.stripe.client import stripe_client
from tests.waiting import wait_until

SECRET = "whsec_test_metering"
URL = "/api/v1/stripe/webhook"
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def webhook_secret(settings):
    settings.STRIPE_WEBHOOK_SECRET = SECRET


def _signed(payload: bytes, *, at: int | None = None, secret: str = SECRET) -> str:
    at = int(time.time()) if at is None else at
    digest = hmac.new(secret.encode(), f"{at}.".encode() + payload, hashlib.sha256).hexdigest()
    return f"t={at},v1={digest}"


def _event(event_id: str, kind: str, obj: dict[str, Any]) -> bytes:
    body = {"id": event_id, "object": "event", "type": kind, "created": int(time.time()), "data": {"object": obj}}
    return json.dumps(body).encode()


def _post(client, payload: bytes, signature: str | None):
    headers = {"HTTP_STRIPE_SIGNATURE": signature} if signature else {}
    return client.post(URL, data=payload, content_type="application/json", **headers)


def _intent(tenant, pi="pi_1", amount=2_500) -> dict[str, Any]:
    return {"id": pi, "object": "payment_intent", "amount": amount, "amount_received": amount,
            "metadata": {"tenant_id": str(tenant.pk)}}  # fmt: skip


def test_webhook_delivered_five_times_and_out_of_order_credits_once(client, tenant, redis_client):
    TopUp.objects.create(tenant=tenant, amount_micros=25_000_000, payment_intent_id="pi_1")
    succeeded = _event("evt_ok", "payment_intent.succeeded", _intent(tenant))
    failed_late = _event("evt_failed", "payment_intent.payment_failed", _intent(tenant))
    again_other_id = _event("evt_ok_resent_as_new", "payment_intent.succeeded", _intent(tenant))
    outcomes = [_post(client, succeeded, _signed(succeeded)).json()["outcome"] for _ in range(5)]
    assert outcomes == ["applied", "duplicate", "duplicate", "duplicate", "duplicate"]
    assert _post(client, failed_late, _signed(failed_late)).status_code == 200
    assert _post(client, again_other_id, _signed(again_other_id)).status_code == 200
    assert tenant_spendable_micros(tenant=tenant) == 25_000_000
    assert Journal.objects.filter(key="topup:pi_1").count() == 1
    assert TopUp.objects.get(payment_intent_id="pi_1").status == TopUpStatus.SUCCEEDED
    assert int(redis_client.get(f"tw:{{t{tenant.pk}}}:avail")) == 25_000_000


@pytest.mark.parametrize(
    ("signature", "code"),
    [
        (None, "signature_missing"),
        ("t=1,v1=deadbeef", "signature_invalid"),
        ("wrong-secret", "signature_invalid"),
        ("stale", "signature_invalid"),
        ("future", "signature_invalid"),
        ("v1=deadbeef", "signature_invalid"),
    ],
)
def test_forged_or_stale_webhooks_are_refused_and_change_nothing(client, tenant, signature, code):
    payload = _event("evt_forged", "payment_intent.succeeded", _intent(tenant, amount=10_000_000))
    if signature == "wrong-secret":
        signature = _signed(payload, secret="whsec_attacker")
    elif signature == "stale":
        signature = _signed(payload, at=int(time.time()) - 3600)
    elif signature == "future":  # correctly signed, dated an hour ahead: a replay window must not open forwards
        signature = _signed(payload, at=int(time.time()) + 3600)
    response = _post(client, payload, signature)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == code
    assert not StripeEvent.objects.exists()
    assert tenant_spendable_micros(tenant=tenant) == 0


def test_tampered_body_is_refused(client, tenant):
    payload = _event("evt_t", "payment_intent.succeeded", _intent(tenant))
    signature = _signed(payload)
    tampered = payload.replace(b"2500", b"9999")
    assert _post(client, tampered, signature).status_code == 400
    assert tenant_spendable_micros(tenant=tenant) == 0


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        (b"[]", "invalid_payload"),
        (b'[{"id": "evt_in_a_list"}]', "invalid_payload"),
        (b'{"id": "evt_partial", "object": "event"}', "invalid_payload"),
        (
            b'{"id": "evt_no_object", "object": "event", "type": "invoice.paid", "created": 1, "data": {}}',
            "invalid_payload",
        ),
        (b'{"id": "evt_cut", "type": ', "invalid_json"),
        (b"\xff\xfe not utf-8", "invalid_json"),
    ],
)
def test_signed_body_that_is_not_a_stripe_event_is_400_not_a_crash(client, tenant, payload, code):
    """Regression: a correctly signed JSON array raised AttributeError inside stripe (a 500)."""
    response = _post(client, payload, _signed(payload))
    assert response.status_code == 400
    assert response.json()["error"]["code"] == code
    assert not StripeEvent.objects.exists()


def test_webhook_answers_other_methods_with_405_in_the_error_shape(client):
    response = client.get(URL)
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"


def test_a_paid_invoice_is_credited_once_and_listed_with_its_hosted_page(client, tenant):
    url = "https://invoice.stripe.com/i/acct_1/test_in_7"
    invoice = {"id": "in_7", "object": "invoice", "amount_paid": 4_200, "hosted_invoice_url": url,
               "metadata": {"tenant_id": str(tenant.pk)}}  # fmt: skip
    paid = _event("evt_in_7", "invoice.paid", invoice)
    assert _post(client, paid, _signed(paid)).json()["outcome"] == "applied"
    assert _post(client, paid, _signed(paid)).json()["outcome"] == "duplicate"
    listed = [(i["number"], i["amount_micros"], i["url"]) for i in tenant_invoices(tenant_id=tenant.pk)]
    assert listed == [("in_7", 42_000_000, url)]
    plain = _event("evt_in_8", "invoice.paid", {**invoice, "id": "in_8", "hosted_invoice_url": "http://x.test/i"})
    _post(client, plain, _signed(plain))
    assert tenant_invoices(tenant_id=tenant.pk)[0]["url"] is None  # only an https page becomes a link


def test_production_without_a_webhook_secret_fails_the_system_check(settings):
    settings.IS_PRODUCTION, settings.STRIPE_WEBHOOK_SECRET = True, ""
    assert [e.id for e in stripe_webhook_secret_check()] == ["metering.E001"]
    settings.STRIPE_WEBHOOK_SECRET = SECRET
    assert stripe_webhook_secret_check() == []


def test_top_up_through_localstripe_is_credited_by_its_signed_webhook(localstripe, live_server, tenant, redis_client):
    hook = {"url": f"{live_server.url}{URL}", "secret": SECRET, "events[]": ["payment_intent.succeeded"]}
    requests.post(f"{localstripe}/_config/webhooks/tokenway", data=hook, timeout=5).raise_for_status()
    customer = customer_ensure(tenant=tenant)
    assert customer.startswith("cus_") and customer_ensure(tenant=tenant) == customer
    card: Any = {"number": "4242424242424242", "exp_month": 12, "exp_year": 2034, "cvc": "123"}
    method = stripe_client().v1.payment_methods.create(params={"type": "card", "card": card})
    topup = topup_start(tenant=tenant, amount_micros=20_000_000, payment_method=method.id)
    wait_until(
        lambda: tenant_spendable_micros(tenant=tenant) != 0,
        timeout=15,
        message="localstripe's payment_intent.succeeded webhook never credited the top-up",
    )
    assert tenant_spendable_micros(tenant=tenant) == 20_000_000
    topup.refresh_from_db()
    assert topup.status == TopUpStatus.SUCCEEDED
    assert StripeEvent.objects.filter(type="payment_intent.succeeded").count() == 1
