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
    PaymentReversal.objects.create(
        stripe_id="re_1", kind="refund", tenant=personas.tenant, amount_micros=3_000_000, status="succeeded"
    )
    PaymentReversal.objects.create(
        stripe_id="dp_1", kind="dispute", tenant=personas.tenant, amount_micros=1_000_000, status="lost"
    )
    MeterEvent.objects.create(
        identifier="gen-m1",
        tenant=personas.tenant,
        customer_id="cus_1",
        value=1200,
        timestamp=now,
        created_at=now - timedelta(seconds=90),
        attempts=3,
        last_error="stripe 500",
    )
    MeterEvent.objects.create(
        identifier="gen-m2",
        tenant=personas.tenant,
        customer_id="cus_1",
        value=800,
        timestamp=now,
        created_at=now,
        status=MeterStatus.SENT,
        sent_at=now,
    )
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
    assert d["probe_spend"].probes == 6 and d["probe_spend"].micros == expected
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


def test_dashboard_shows_each_offerings_drift_and_the_over_count_disputed(personas, redis_client):
    """docs/billing.md, "Over-counting providers": the per-offering drift operators watch."""
    import math
    import time
    from dataclasses import replace

    from contracts.snapshot import OfferingStats, StatsSnapshot
    from evaluation.services.snapshot import snapshot_publish
    from metering.ingest import usage_ingest
    from tests.metering.conftest import PRICES, make_event

    flagged = OfferingStats(offering_id=7, n=40, flags=("token_overcount",), price_n=40, overcount_factor=1.15)
    snapshot_publish(
        client=redis_client,
        snapshot=StatsSnapshot(version=0, generated_at=time.time(), window="1h", stats={"all": {"7": flagged}}),
    )
    true = Tokens(input_uncached=1_000, cache_read=800, output=300, reasoning=50)
    reported = replace(
        true, input_uncached=math.ceil(1_000 * 1.15), output=math.ceil(300 * 1.15), reasoning=math.ceil(50 * 1.15)
    )
    usage_ingest(
        events=[
            make_event(personas.tenant.pk, request_id="req_drift", offering_id=7, tokens=reported),
            make_event(personas.tenant.pk, request_id="req_honest", offering_id=8, tokens=true),
        ]
    )
    response = _staff(personas).get("/ops/billing/")
    rows = {row["offering_id"]: row for row in response.context["d"]["drift"]}
    over = cost_micros(reported, PRICES) - cost_micros(true, PRICES)
    assert rows[7]["corrected"] == 1 and rows[7]["disputed_micros"] == over and rows[7]["drifting"]
    assert rows[7]["booked_micros"] - rows[7]["computed_micros"] == over
    assert rows[8]["corrected"] == 0 and rows[8]["disputed_micros"] == 0 and not rows[8]["drifting"]
    assert next(iter(rows)) == 7  # drifting offerings first
    html = response.content.decode()
    assert 'id="ops-drift"' in html and 'data-offering="7"' in html and "badge-bad" in html
