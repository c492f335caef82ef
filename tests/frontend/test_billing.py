"""Console top-up: refused clearly when Stripe is not configured, status readable by members only."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone

from evaluation.models import ProbeResult
from metering.models import SpendAlert, TopUp
from metering.services import balance_topup

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


def test_owner_adds_and_removes_a_spend_alert_and_another_tenant_cannot_remove_it(personas):
    owner = _client(personas.owner)
    response = owner.post("/console/acme/billing/alerts/", {"threshold": "25", "email": "ops@acme.test"})
    assert response.status_code == 302
    alert = SpendAlert.objects.get()
    assert (alert.tenant_id, alert.threshold_micros, alert.email) == (personas.tenant.pk, 25_000_000, "ops@acme.test")
    assert "ops@acme.test" in owner.get("/console/acme/billing/").content.decode()
    outsider = _client(personas.outsider)
    assert outsider.post(f"/console/acme/billing/alerts/{alert.pk}/delete/").status_code == 404
    outsider.post(f"/console/globex/billing/alerts/{alert.pk}/delete/")
    assert SpendAlert.objects.filter(pk=alert.pk).exists()
    assert owner.post(f"/console/acme/billing/alerts/{alert.pk}/delete/").status_code == 302
    assert not SpendAlert.objects.exists()


def test_an_invalid_or_unpermitted_alert_is_not_added(personas):
    response = _client(personas.owner).post("/console/acme/billing/alerts/", {"threshold": "0"})
    assert response.status_code == 200 and "errorlist" in response.content.decode()
    assert _client(personas.developer).post("/console/acme/billing/alerts/", {"threshold": "25"}).status_code == 403
    assert not SpendAlert.objects.exists()


def test_the_invoices_card_lists_paid_invoices_with_a_link_to_stripes_page(personas):
    url = "https://invoice.stripe.com/i/acct_1/test_in_5"
    balance_topup(
        tenant=personas.tenant, amount_micros=12_000_000, idempotency_key="invoice:in_5", source="invoice", memo=url
    )
    page = _client(personas.owner).get("/console/acme/billing/").content.decode()
    assert "in_5" in page and f'href="{url}"' in page and "No invoices yet" not in page
    assert "in_5" not in _client(personas.outsider).get("/console/globex/billing/").content.decode()


def test_the_ops_dashboard_shows_probe_coverage_from_evaluation(personas, catalog, settings):
    settings.TOKENWAY_REGIONS = ["beijing"]
    ProbeResult.objects.create(
        offering_id=catalog[0].pk, region="beijing", kind="performance", variant="1k", started_at=timezone.now()
    )
    page = _client(personas.staff).get("/ops/billing/").content.decode()
    assert "Beijing" in page and f"1 / {len(catalog)}" in page and "1 probes" in page
