"""Live-mode keys top up through Stripe Checkout; the PaymentIntent's webhook credits and links the top-up.

localstripe has no Checkout, so a loopback server speaking Stripe's form-encoded API answers
``POST /v1/checkout/sessions`` and records what it was sent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

import pytest
from django.urls import reverse

from metering.ledger import tenant_account_balance
from metering.models import TopUp, TopUpStatus
from metering.services import tenant_available_ensure
from metering.stripe.client import clients_reset
from tests.metering.stripe_signing import SECRET, deliver

pytestmark = pytest.mark.django_db(transaction=True)
CHECKOUT_URL = "https://checkout.stripe.com/c/pay/cs_live_tokenway"


class _Checkout(BaseHTTPRequestHandler):
    seen: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # http.server's name for the POST handler
        body = self.rfile.read(int(self.headers["Content-Length"] or 0)).decode()
        self.seen.append({"path": self.path, "auth": self.headers["Authorization"], "form": parse_qs(body)})
        payload = json.dumps({"id": "cs_live_tokenway", "object": "checkout.session", "url": CHECKOUT_URL}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def checkout_stripe(settings) -> Iterator[list[dict[str, Any]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Checkout)
    _Checkout.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    settings.STRIPE_API_BASE = f"http://127.0.0.1:{server.server_address[1]}"
    settings.STRIPE_API_KEY = "sk_live_tokenway"
    settings.STRIPE_WEBHOOK_SECRET = SECRET
    clients_reset()
    yield _Checkout.seen
    clients_reset()
    server.shutdown()
    thread.join()


def test_a_live_key_top_up_goes_through_checkout_and_its_payment_is_credited_once(
    client, tenant, owner, redis_client, checkout_stripe
):
    tenant.stripe_customer_id = "cus_live"
    tenant.save()
    tenant_available_ensure(tenant=tenant)
    client.force_login(owner.user)
    response = client.post(reverse("frontend:topup", args=["acme"]), {"amount": "25"})
    assert response.status_code == 302 and response["Location"] == CHECKOUT_URL
    [sent] = checkout_stripe
    topup = TopUp.objects.get()
    form = sent["form"]
    assert sent["path"] == "/v1/checkout/sessions" and sent["auth"] == "Bearer sk_live_tokenway"
    assert form["mode"] == ["payment"] and form["customer"] == ["cus_live"]
    assert form["line_items[0][price_data][unit_amount]"] == ["2500"]
    assert form["payment_intent_data[metadata][topup_id]"] == [str(topup.pk)]
    assert form["success_url"][0].endswith("/billing/")
    assert (topup.status, topup.payment_intent_id) == (TopUpStatus.PENDING, None)

    intent = {"id": "pi_live_1", "object": "payment_intent", "amount": 2500, "amount_received": 2500,
              "metadata": {"tenant_id": str(tenant.pk), "topup_id": str(topup.pk)}}  # fmt: skip
    assert deliver(client, "evt_live_1", "payment_intent.succeeded", intent).json()["outcome"] == "applied"
    assert deliver(client, "evt_live_2", "payment_intent.succeeded", intent).json()["outcome"] == "duplicate"
    topup.refresh_from_db()
    assert (topup.status, topup.payment_intent_id) == (TopUpStatus.SUCCEEDED, "pi_live_1")
    assert TopUp.objects.count() == 1
    assert tenant_account_balance(tenant_id=tenant.pk) == 25_000_000


def test_a_member_without_billing_rights_cannot_start_a_live_top_up(client, tenant, developer, checkout_stripe):
    client.force_login(developer.user)
    response = client.post(reverse("frontend:topup", args=["acme"]), {"amount": "25"})
    assert response.status_code == 403
    assert checkout_stripe == [] and not TopUp.objects.exists()


def test_a_failed_checkout_payment_marks_its_top_up_failed_and_credits_nothing(
    client, tenant, owner, redis_client, checkout_stripe
):
    tenant.stripe_customer_id = "cus_live"
    tenant.save()
    client.force_login(owner.user)
    client.post(reverse("frontend:topup", args=["acme"]), {"amount": "25"})
    topup = TopUp.objects.get()
    intent = {"id": "pi_live_declined", "object": "payment_intent", "amount": 2500,
              "metadata": {"tenant_id": str(tenant.pk), "topup_id": str(topup.pk)}}  # fmt: skip
    deliver(client, "evt_live_failed", "payment_intent.payment_failed", intent)
    topup.refresh_from_db()
    assert (topup.status, topup.payment_intent_id) == (TopUpStatus.FAILED, "pi_live_declined")
    assert tenant_account_balance(tenant_id=tenant.pk) == 0
