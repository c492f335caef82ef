"""Operators' billing dashboard: cash moved (top-ups, refunds, lost disputes), prepaid liability, probe spend,
Stripe meter sync per tenant, and the drill-down to one tenant, computed from real ledger and model rows."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from contracts.usage import Prices, Tokens, cost_micros
from metering.models import MeterEvent, MeterStatus, PaymentReversal, TopUp
from metering.services import demo_credit_ensure
from tests.frontend.site import history

pytestmark = pytest.mark.django_db


@pytest.fixture
def books(personas, catalog, redis_client):
    now = timezone.now()
    demo_credit_ensure(personas.tenant)  # $50 through the ledger: the prepaid liability
    TopUp.objects.create(tenant=personas.tenant, amount_micros=20_000_000, status="succeeded", completed_at=now)
    TopUp.objects.create(tenant=personas.tenant, amount_micros=5_000_000, status="failed")
    PaymentReversal.objects.create(stripe_id="re_1", kind="refund", tenant=personas.tenant, amount_micros=3_000_000,
                                   status="succeeded")  # fmt: skip
    PaymentReversal.objects.create(stripe_id="dp_1", kind="dispute", tenant=personas.tenant, amount_micros=1_000_000,
                                   status="lost")  # fmt: skip
    MeterEvent.objects.create(identifier="gen-m1", tenant=personas.tenant, customer_id="cus_1", value=1200,
                              timestamp=now, created_at=now - timedelta(seconds=90), attempts=3,
                              last_error="stripe 500")  # fmt: skip
    MeterEvent.objects.create(identifier="gen-m2", tenant=personas.tenant, customer_id="cus_1", value=800,
                              timestamp=now, created_at=now, status=MeterStatus.SENT, sent_at=now)  # fmt: skip
    history(catalog[:1], hours=2, per_hour=3)  # 6 probes of 1,000 in / 200 out tokens each
    return personas


def _staff(personas) -> Client:
    client = Client()
    client.force_login(personas.staff)
    return client


def test_dashboard_shows_cash_liability_probe_spend_and_sync_per_tenant(books, catalog):
    response = _staff(books).get("/ops/billing/")
    d = response.context["d"]
    assert d["cash"]["topup_cash_micros"] == 20_000_000 and d["cash"]["topups"] == 1
    assert d["cash"]["refunds_micros"] == 3_000_000 and d["cash"]["disputes_lost_micros"] == 1_000_000
    assert d["cash"]["prepaid_liability_micros"] == 50_000_000
    price = catalog[0].prices.get()
    expected = 6 * cost_micros(Tokens(input_uncached=1000, output=200), Prices(input=price.input, output=price.output))
    assert d["probe_spend"]["probes"] == 6 and d["probe_spend"]["micros"] == expected
    acme = next(t for t in d["tenants"] if t["slug"] == "acme")
    assert acme["topups_failed"] == 1 and acme["meter"]["pending"] == 1 and acme["meter"]["failing"] == 1
    assert acme["meter"]["sent"] == 1 and 80 <= acme["meter"]["lag_seconds"] < 600
    html = response.content.decode()
    assert 'id="ops-topup-cash">$20.0000<' in html and 'id="ops-liability">$50.0000<' in html
    assert f'href="/ops/billing/tenants/{books.tenant.pk}/"' in html


def test_tenant_drilldown(books):
    response = _staff(books).get(f"/ops/billing/tenants/{books.tenant.pk}/")
    t = response.context["t"]
    assert sorted(p.status for p in t["topups"]) == ["failed", "succeeded"]
    assert {r["stripe_id"] for r in t["reversals"]} == {"re_1", "dp_1"}
    assert [e["identifier"] for e in t["meter_failures"]] == ["gen-m1"]
    html = response.content.decode()
    assert "stripe 500" in html and 'id="tenant-balance">$50.000000<' in html
