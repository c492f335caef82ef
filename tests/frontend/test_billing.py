"""Console top-up: refused clearly when Stripe is not configured, status readable by members only."""

from __future__ import annotations

import pytest
from django.test import Client

from metering.models import TopUp

pytestmark = pytest.mark.django_db


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_top_up_without_stripe_configured_says_so_and_creates_nothing(personas, settings):
    settings.STRIPE_API_KEY = ""
    client = _client(personas.owner)
    page = client.get("/console/acme/billing/").content.decode()
    assert 'id="stripe-off"' in page and "STRIPE_API_KEY" in page
    response = client.post("/console/acme/billing/topup/", {"amount": "20"})
    assert response.status_code == 400
    assert "not configured on this server" in response.content.decode()
    assert not TopUp.objects.exists()


def test_top_up_amount_errors_are_on_the_field(personas, settings):
    settings.STRIPE_API_KEY = "sk_test_frontend"
    response = _client(personas.owner).post("/console/acme/billing/topup/", {"amount": "1"})
    assert "The smallest top-up is $5." in response.content.decode()
    assert not TopUp.objects.exists()


def test_developer_may_not_top_up(personas, settings):
    settings.STRIPE_API_KEY = "sk_test_frontend"
    response = _client(personas.developer).post("/console/acme/billing/topup/", {"amount": "20"})
    assert response.status_code == 403
    assert not TopUp.objects.exists()


def test_top_up_status_is_for_members_of_its_tenant_only(personas):
    topup = TopUp.objects.create(tenant=personas.tenant, amount_micros=20_000_000, payment_intent_id="pi_x")
    url = f"/console/acme/billing/topups/{topup.pk}/"
    body = _client(personas.owner).get(url).json()
    assert body == {"id": topup.pk, "status": "pending", "amount_micros": 20_000_000, "balance_micros": 0}
    assert _client(personas.outsider).get(url).status_code == 404
    assert _client(personas.outsider).get(f"/console/globex/billing/topups/{topup.pk}/").status_code == 404
    assert Client().get(url).status_code == 302
