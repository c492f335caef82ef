"""Webhook amounts: a malformed one is a 400 that records and books nothing; a refund takes back at most
what remains of its payment (docs/billing.md, "Webhook amounts and refund caps")."""

from __future__ import annotations

import json
from typing import Any

import pytest

from metering.ledger import tenant_account_balance
from metering.models import (
    AccountKind,
    Balance,
    Journal,
    JournalLine,
    PaymentReversal,
    ReconciliationFinding,
    StripeEvent,
)
from metering.reconcile import check_balances_match_ledger, check_journals_balance, check_reversals_applied
from metering.services import tenant_available_ensure
from metering.stripe.webhooks import MAX_AMOUNT_CENTS
from tests.metering.stripe_signing import SECRET, URL, deliver, event, signed

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def webhook_secret(settings):
    settings.STRIPE_WEBHOOK_SECRET = SECRET


def _intent(tenant, amount: Any, pi: str = "pi_amounts") -> dict[str, Any]:
    return {"id": pi, "object": "payment_intent", "amount": amount, "amount_received": amount,
            "metadata": {"tenant_id": str(tenant.pk)}}  # fmt: skip


def _refund(refund_id: str, cents: Any, pi: str = "pi_amounts") -> dict[str, Any]:
    return {"id": refund_id, "object": "refund", "amount": cents, "payment_intent": pi, "charge": "ch_amounts",
            "status": "succeeded"}  # fmt: skip


def _books() -> tuple[int, int, int, int]:
    return (Journal.objects.count(), JournalLine.objects.count(), StripeEvent.objects.count(),
            PaymentReversal.objects.count())  # fmt: skip


def _clearing() -> int:
    row = Balance.objects.filter(account__tenant=None, account__kind=AccountKind.STRIPE_CLEARING)
    return int(row.values_list("amount_micros", flat=True).first() or 0)


@pytest.mark.parametrize("amount", ["1000", 10**20, -100, 12.5, True, MAX_AMOUNT_CENTS + 1, {"value": 1}])
def test_a_malformed_payment_amount_is_a_400_and_nothing_is_recorded_or_booked(client, tenant, amount):
    response = deliver(client, "evt_bad_amount", "payment_intent.succeeded", _intent(tenant, amount))
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid_amount"
    assert "data.object.amount" in error["message"]
    assert _books() == (0, 0, 0, 0)
    assert tenant_account_balance(tenant_id=tenant.pk) == 0


def test_a_malformed_amount_inside_a_charges_refund_list_is_a_400(client, tenant, redis_client):
    tenant_available_ensure(tenant=tenant)
    assert deliver(client, "evt_paid", "payment_intent.succeeded", _intent(tenant, 2_000)).status_code == 200
    before = _books()
    charge = {"id": "ch_amounts", "object": "charge", "amount": 2_000, "payment_intent": "pi_amounts",
              "refunds": {"object": "list", "has_more": False, "data": [_refund("re_str", "1000")]}}  # fmt: skip
    response = deliver(client, "evt_refunded_str", "charge.refunded", charge)
    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("data.object.refunds.data[0].amount ")
    assert _books() == before
    assert tenant_account_balance(tenant_id=tenant.pk) == 20_000_000


def test_the_largest_stripe_amount_is_accepted_and_booked_exactly(client, tenant, redis_client):
    tenant_available_ensure(tenant=tenant)
    response = deliver(client, "evt_big", "payment_intent.succeeded", _intent(tenant, MAX_AMOUNT_CENTS))
    assert response.status_code == 200 and response.json()["outcome"] == "applied"
    assert tenant_account_balance(tenant_id=tenant.pk) == MAX_AMOUNT_CENTS * 10_000


def test_a_refund_larger_than_its_payment_takes_back_only_the_payment_and_flags_the_rest(client, tenant, redis_client):
    tenant_available_ensure(tenant=tenant)
    deliver(client, "evt_paid", "payment_intent.succeeded", _intent(tenant, 2_000))  # $20
    response = deliver(client, "evt_refund_big", "refund.created", _refund("re_big", 5_000))  # $50 "refunded"
    assert response.status_code == 200 and response.json()["outcome"] == "applied"
    assert tenant_account_balance(tenant_id=tenant.pk) == 0
    assert int(redis_client.get(f"tw:{{t{tenant.pk}}}:avail")) == 0
    assert _clearing() == 0  # money in, the same money out: nothing more
    [finding] = ReconciliationFinding.objects.filter(check_name="refund_over_payment")
    assert finding.subject == "refund:re_big" and finding.severity == "error"
    assert finding.detail["booked_micros"] == 20_000_000 and finding.detail["excess_micros"] == 30_000_000
    # Replayed, and a second refund of the same (now fully refunded) payment: nothing more moves.
    assert deliver(client, "evt_refund_big", "refund.created", _refund("re_big", 5_000)).json()["outcome"] == (
        "duplicate"
    )
    assert deliver(client, "evt_refund_more", "refund.created", _refund("re_more", 100)).status_code == 200
    assert tenant_account_balance(tenant_id=tenant.pk) == 0 and _clearing() == 0
    assert ReconciliationFinding.objects.filter(check_name="refund_over_payment").count() == 2
    assert check_journals_balance() == [] and check_balances_match_ledger() == []
    assert check_reversals_applied() == []


def test_partial_refunds_stop_at_the_payment_and_a_failed_one_frees_its_part(client, tenant, redis_client):
    tenant_available_ensure(tenant=tenant)
    deliver(client, "evt_paid", "payment_intent.succeeded", _intent(tenant, 2_000))
    deliver(client, "evt_r1", "refund.created", _refund("re_1", 1_500))
    deliver(client, "evt_r2", "refund.created", _refund("re_2", 1_500))
    assert tenant_account_balance(tenant_id=tenant.pk) == 0
    assert ReconciliationFinding.objects.get(check_name="refund_over_payment").detail["booked_micros"] == 5_000_000
    # The first refund fails after all: its $15 comes back, and the payment has $15 refundable again.
    deliver(client, "evt_r1_failed", "refund.updated", {**_refund("re_1", 1_500), "status": "failed"})
    assert tenant_account_balance(tenant_id=tenant.pk) == 15_000_000
    deliver(client, "evt_r3", "refund.created", _refund("re_3", 1_500))
    assert tenant_account_balance(tenant_id=tenant.pk) == 0 and _clearing() == 0
    assert check_journals_balance() == [] and check_reversals_applied() == []


def test_an_unsigned_malformed_amount_is_refused_by_its_signature_first(client, tenant):
    payload = event("evt_unsigned", "payment_intent.succeeded", _intent(tenant, "1000"))
    response = client.post(
        URL, data=payload, content_type="application/json", HTTP_STRIPE_SIGNATURE=signed(payload, secret="whsec_other")
    )
    assert response.status_code == 400 and response.json()["error"]["code"] == "signature_invalid"
    assert json.loads(payload)["data"]["object"]["amount"] == "1000" and _books() == (0, 0, 0, 0)
