"""The operators' dashboard reconciles: cash + credits = liability + spent (− uncollected) holds after
top-ups, a refund, a lost dispute, usage, the demo credit, a promotion and a provider-invoice import, all
through the real services (signed Stripe webhooks, usage ingestion, the invoice import) and the ledger;
every figure links to its ledger accounts, and the margin takes off invoice imports and probe spend."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from evaluation.models import ProbeResult
from metering.ingest import usage_ingest
from metering.models import AccountKind, Balance, TopUp
from metering.provider_invoices import invoice_parse, provider_invoice_import
from metering.reconcile import check_journals_balance
from metering.services import balance_topup, demo_credit_ensure, tenant_available_ensure
from tests.metering.conftest import make_event
from tests.metering.stripe_signing import SECRET, deliver

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def webhook_secret(settings):
    settings.STRIPE_WEBHOOK_SECRET = SECRET


def _paid(client, tenant, pi: str, cents: int) -> None:
    TopUp.objects.create(tenant=tenant, amount_micros=cents * 10_000, payment_intent_id=pi)
    intent = {
        "id": pi,
        "object": "payment_intent",
        "amount": cents,
        "amount_received": cents,
        "metadata": {"tenant_id": str(tenant.pk)},
    }
    response = deliver(client, f"evt_paid_{pi}", "payment_intent.succeeded", intent)
    assert response.status_code == 200 and response.json()["outcome"] == "applied"


def _reversal(kind: str, stripe_id: str, pi: str, cents: int, status: str) -> dict[str, Any]:
    return {
        "id": stripe_id,
        "object": kind,
        "amount": cents,
        "payment_intent": pi,
        "charge": f"ch_{pi}",
        "status": status,
        "reason": "fraudulent",
    }


def _platform(kind: str) -> int:
    row = Balance.objects.filter(account__tenant=None, account__kind=kind).values_list("amount_micros", flat=True)
    return int(row.first() or 0)


def _figure(html: str, name: str) -> int:
    found = re.search(rf'data-figure="{name}"><td>[^<]*</td><td class="num" data-micros="(-?\d+)"', html)
    assert found, name
    return int(found.group(1))


@pytest.fixture
def books(client, personas, catalog, redis_client):
    acme, globex = personas.tenant, personas.other_tenant
    for tenant in (acme, globex):
        tenant_available_ensure(tenant=tenant)
    _paid(client, acme, "pi_a", 2_000)  # $20
    _paid(client, globex, "pi_g", 1_000)  # $10
    refund = _reversal("refund", "re_a", "pi_a", 500, "succeeded")  # $5 back to acme's card
    assert deliver(client, "evt_re_a", "refund.created", refund).json()["outcome"] == "applied"
    lost = _reversal("dispute", "dp_g", "pi_g", 1_000, "lost")  # globex's payment taken back, after it spent some
    demo_credit_ensure(globex)  # the demo's $50
    balance_topup(tenant=acme, amount_micros=3_000_000, idempotency_key="promo:acme:1", source="promotion")
    deepseek = catalog[0]
    events = [
        make_event(t.pk, request_id=f"gen-{t.slug}-{i}", offering_id=deepseek.pk, markup_bps=2500)
        for t in (acme, globex)
        for i in range(3)
    ]
    usage_ingest(events=events)
    assert deliver(client, "evt_dp_g", "charge.dispute.closed", lost).json()["outcome"] == "applied"
    booked = sum(e.cost_micros for e in events)
    day = dt.datetime.fromtimestamp(events[0].finished_at, tz=dt.UTC).date()
    invoiced = booked + 400_000  # the provider bills $0.40 more than usage booked
    text = f"date,model,amount_usd\n{day},deepseek-v4-flash,{invoiced / 1_000_000:.6f}\n"
    provider_invoice_import(provider="deepseek", lines=invoice_parse(text))
    ProbeResult.objects.create(
        offering_id=deepseek.pk,
        region="beijing",
        kind="performance",
        variant="1k",
        started_at=timezone.now(),
        input_tokens=1_000,
        output_tokens=200,
    )
    return {"events": events, "booked": booked, "invoiced": invoiced}


def test_cash_plus_credits_equals_liability_plus_spent_on_the_dashboard(personas, books):
    assert check_journals_balance() == []
    staff = Client()
    staff.force_login(personas.staff)
    html = staff.get("/ops/billing/").content.decode()
    cash, credits = _figure(html, "cash"), _figure(html, "credits")
    liability, spent, uncollected = _figure(html, "liability"), _figure(html, "spent"), _figure(html, "uncollected")
    assert cash == 20_000_000 + 10_000_000 - 5_000_000 - 10_000_000
    assert credits == 50_000_000 + 3_000_000
    assert spent == sum(e.charge_micros for e in books["events"])
    assert cash + credits == liability + spent - uncollected
    assert uncollected == 0  # globex still held its $10 when the dispute took it back
    assert 'id="ops-identity-check">holds<' in html and 'data-difference="0"' in html
    assert _figure(html, "provider_cost") == books["invoiced"] == _platform(AccountKind.PROVIDER_COST)
    assert "demo $50.000000" in html and "promotions $3.000000" in html
    assert f"invoice imports ${400_000 / 1_000_000:.6f}" in html
    margin = re.search(r'id="ops-margin-net">\$(-?[\d,.]+)<', html)
    assert margin is not None
    probe_cost = staff.get("/ops/billing/").context["d"]["margin"]["probe_spend_micros"]
    assert probe_cost > 0
    window = staff.get("/ops/billing/").context["d"]["margin"]
    assert window["margin_micros"] == spent - books["invoiced"] - probe_cost
    assert window["invoice_adjustments_micros"] == 400_000


def test_a_shortfall_is_shown_and_the_identity_still_holds(client, personas, books):
    """A refund of money the tenant already spent: the balance stops at zero and the rest is uncollected."""
    acme = personas.tenant
    _paid(client, acme, "pi_small", 500)  # $5
    usage_ingest(events=[make_event(acme.pk, request_id=f"gen-spend-{i}", charge_micros=9_000_000) for i in range(3)])
    refund = _reversal("refund", "re_small", "pi_small", 500, "succeeded")
    assert deliver(client, "evt_re_small", "refund.created", refund).json()["outcome"] == "applied"
    staff = Client()
    staff.force_login(personas.staff)
    books_now = staff.get("/ops/billing/").context["d"]["books"]
    assert books_now["uncollected"].micros > 0 and books_now["difference_micros"] == 0


def test_each_figure_drills_down_to_its_ledger_accounts(personas, books):
    staff = Client()
    staff.force_login(personas.staff)
    html = staff.get("/ops/billing/").content.decode()
    for kind in ("stripe_clearing", "promotions", "available", "spent", "provider_cost"):
        assert f'href="/ops/billing/accounts/{kind}/"' in html
    promotions = staff.get("/ops/billing/accounts/promotions/").content.decode()
    assert f"demo:{personas.other_tenant.pk}" in promotions and "promo:acme:1" in promotions
    assert 'id="account-total">$-53.000000<' in promotions
    available = staff.get("/ops/billing/accounts/available/").content.decode()
    assert 'href="/ops/billing/tenants/' in available and "globex" in available
    cost = staff.get("/ops/billing/accounts/provider_cost/").content.decode()
    assert "provider_invoice:" in cost


def test_account_pages_are_staff_only_and_unknown_kinds_are_404(personas, books):
    owner = Client()
    owner.force_login(personas.owner)
    assert owner.get("/ops/billing/accounts/available/").status_code == 404
    assert Client().get("/ops/billing/accounts/available/").status_code == 302
    staff = Client()
    staff.force_login(personas.staff)
    assert staff.get("/ops/billing/accounts/no-such-kind/").status_code == 404
