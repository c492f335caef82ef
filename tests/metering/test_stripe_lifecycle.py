"""Refunds, disputes, duplicate payment events and receipts, through signed webhooks (and localstripe)."""

from __future__ import annotations

from typing import Any

import pytest
from django.core import mail

from metering.billing import topup_start
from metering.ingest import usage_ingest
from metering.ledger import tenant_account_balance
from metering.models import AccountKind, Balance, Journal, PaymentReversal, StripeEvent, TopUp
from metering.reconcile import check_credits_have_payments, check_journals_balance, check_reversals_applied
from metering.services import tenant_available_ensure
from metering.stripe.client import stripe_client
from tests.metering.conftest import make_event
from tests.metering.stripe_signing import SECRET, deliver

pytestmark = pytest.mark.django_db(transaction=True)
CARD: Any = {"number": "4242424242424242", "exp_month": 12, "exp_year": 2034, "cvc": "123"}


@pytest.fixture(autouse=True)
def webhook_secret(settings):
    settings.STRIPE_WEBHOOK_SECRET = SECRET


def _intent(tenant, pi: str = "pi_life", cents: int = 2_000) -> dict[str, Any]:
    return {"id": pi, "object": "payment_intent", "amount": cents, "amount_received": cents,
            "metadata": {"tenant_id": str(tenant.pk)}}  # fmt: skip


def _paid(client, tenant, pi: str = "pi_life", cents: int = 2_000) -> None:
    tenant_available_ensure(tenant=tenant)
    response = deliver(client, f"evt_paid_{pi}", "payment_intent.succeeded", _intent(tenant, pi, cents))
    assert response.status_code == 200 and response.json()["outcome"] == "applied"


def _outcome(response) -> str:
    assert response.status_code == 200, response.content
    return str(response.json()["outcome"])


def _balance(tenant) -> int:
    return tenant_account_balance(tenant_id=tenant.pk)


def _platform(kind: str) -> int:
    row = Balance.objects.filter(account__tenant=None, account__kind=kind).values_list("amount_micros", flat=True)
    return int(row.first() or 0)


def _books_clean() -> None:
    assert check_journals_balance() == []
    assert check_credits_have_payments() == []
    assert check_reversals_applied() == []


def _refund(tenant, refund_id: str, cents: int, pi: str = "pi_life", status: str = "succeeded") -> dict[str, Any]:
    return {"id": refund_id, "object": "refund", "amount": cents, "payment_intent": pi, "charge": "ch_life",
            "status": status}  # fmt: skip


def _dispute(dispute_id: str, cents: int, status: str, pi: str = "pi_life") -> dict[str, Any]:
    return {"id": dispute_id, "object": "dispute", "amount": cents, "payment_intent": pi, "charge": "ch_life",
            "status": status, "reason": "fraudulent"}  # fmt: skip


def test_a_second_event_id_for_a_credited_payment_is_recorded_as_a_duplicate(client, tenant, owner, redis_client):
    _paid(client, tenant)
    again = deliver(client, "evt_paid_again", "payment_intent.succeeded", _intent(tenant))
    assert _outcome(again) == "duplicate"
    assert StripeEvent.objects.get(event_id="evt_paid_again").outcome == "duplicate"
    assert StripeEvent.objects.get(event_id="evt_paid_pi_life").outcome == "applied"
    assert _balance(tenant) == 20_000_000
    assert Journal.objects.filter(key="topup:pi_life").count() == 1
    assert len(mail.outbox) == 1  # one receipt, for the one credit
    _books_clean()


def test_a_succeeded_top_up_emails_a_receipt_to_the_owner(client, tenant, owner, redis_client):
    _paid(client, tenant, cents=1_234)
    [receipt] = mail.outbox
    assert receipt.to == [owner.user.email]
    assert "$12.34" in receipt.subject and "pi_life" in receipt.body
    assert TopUp.objects.get(payment_intent_id="pi_life").amount_micros == 12_340_000  # the payment row exists


def test_partial_then_full_refund_through_localstripe_debits_each_refund_once(
    client, tenant, redis_client, localstripe, settings
):
    method = stripe_client().v1.payment_methods.create(params={"type": "card", "card": CARD})
    topup = topup_start(tenant=tenant, amount_micros=12_340_000, payment_method=method.id)
    pi = str(topup.payment_intent_id)
    intent = stripe_client().v1.payment_intents.retrieve(pi).to_dict()
    tenant_available_ensure(tenant=tenant)
    assert _outcome(deliver(client, "evt_pi_ok", "payment_intent.succeeded", intent)) == "applied"
    assert _balance(tenant) == 12_340_000

    first = stripe_client().v1.refunds.create(params={"payment_intent": pi, "amount": 234})
    charge = stripe_client().v1.charges.retrieve(str(first.charge)).to_dict()
    assert _outcome(deliver(client, "evt_refunded_1", "charge.refunded", charge)) == "applied"
    assert _outcome(deliver(client, "evt_refund_created_1", "refund.created", first.to_dict())) == "duplicate"
    assert _balance(tenant) == 12_340_000 - 2_340_000
    assert Journal.objects.filter(key=f"refund:{first.id}").count() == 1

    # The rest, so the payment is refunded in full (localstripe, unlike Stripe, would refund the whole charge again).
    second = stripe_client().v1.refunds.create(params={"payment_intent": pi, "amount": 1_000})
    charge = stripe_client().v1.charges.retrieve(str(second.charge)).to_dict()
    assert _outcome(deliver(client, "evt_refunded_2", "charge.refunded", charge)) == "applied"
    assert _balance(tenant) == 0
    assert int(redis_client.get(f"tw:{{t{tenant.pk}}}:avail")) == 0  # the gateway sees it at once
    assert _platform(AccountKind.STRIPE_CLEARING) == 0  # money in, money out
    assert set(PaymentReversal.objects.values_list("stripe_id", "status")) == {
        (first.id, "succeeded"),
        (second.id, "succeeded"),
    }
    _books_clean()


def test_refund_of_funds_already_spent_stops_at_zero_and_books_the_rest_to_reversal_shortfall(
    client, tenant, redis_client
):
    _paid(client, tenant, cents=1)  # $0.01 = 10,000 micros
    usage_ingest(events=[make_event(tenant.pk, request_id="req_spent")])  # 5,200 spent
    assert _outcome(deliver(client, "evt_r", "refund.created", _refund(tenant, "re_spent", 1))) == "applied"
    assert _balance(tenant) == 0
    assert _platform(AccountKind.REVERSAL_SHORTFALL) == -5_200
    _books_clean()


def test_a_refund_that_fails_after_it_was_booked_is_restored_once(client, tenant, redis_client):
    _paid(client, tenant)
    assert _outcome(deliver(client, "evt_r1", "refund.created", _refund(tenant, "re_f", 500, status="pending"))) == (
        "applied"
    )
    assert _balance(tenant) == 15_000_000
    failed = _refund(tenant, "re_f", 500, status="failed")
    assert _outcome(deliver(client, "evt_r2", "charge.refund.updated", failed)) == "applied"
    assert _outcome(deliver(client, "evt_r3", "refund.updated", failed)) == "ignored"
    late = _refund(tenant, "re_f", 500, status="pending")  # an older status arriving last changes nothing
    deliver(client, "evt_r4", "refund.updated", late)
    assert _balance(tenant) == 20_000_000
    assert PaymentReversal.objects.get(stripe_id="re_f").status == "failed"
    _books_clean()


def test_a_won_dispute_withdraws_then_reinstates_and_a_lost_one_withdraws_once(client, tenant, redis_client):
    _paid(client, tenant)
    assert _outcome(deliver(client, "evt_d1", "charge.dispute.created", _dispute("dp_won", 800, "needs_response")))
    assert _balance(tenant) == 12_000_000
    withdrawn = deliver(client, "evt_d2", "charge.dispute.funds_withdrawn", _dispute("dp_won", 800, "under_review"))
    assert _outcome(withdrawn) == "duplicate"
    assert _outcome(deliver(client, "evt_d3", "charge.dispute.closed", _dispute("dp_won", 800, "won"))) == "applied"
    assert _outcome(deliver(client, "evt_d4", "charge.dispute.funds_reinstated", _dispute("dp_won", 800, "won"))) == (
        "ignored"
    )
    assert _balance(tenant) == 20_000_000

    deliver(client, "evt_d5", "charge.dispute.created", _dispute("dp_lost", 500, "needs_response"))
    assert _outcome(deliver(client, "evt_d6", "charge.dispute.closed", _dispute("dp_lost", 500, "lost"))) == (
        "duplicate"
    )
    assert _balance(tenant) == 15_000_000
    assert Journal.objects.filter(key="dispute:dp_lost:withdrawn").count() == 1
    _books_clean()


def test_an_inquiry_and_a_won_dispute_reported_out_of_order_move_no_money(client, tenant, redis_client):
    _paid(client, tenant)
    inquiry = _dispute("dp_inq", 800, "warning_needs_response")
    assert _outcome(deliver(client, "evt_i1", "charge.dispute.created", inquiry)) == "ignored"
    assert _outcome(deliver(client, "evt_o1", "charge.dispute.closed", _dispute("dp_late", 800, "won"))) == "ignored"
    stale = deliver(client, "evt_o2", "charge.dispute.created", _dispute("dp_late", 800, "needs_response"))
    assert _outcome(stale) == "ignored"
    assert _balance(tenant) == 20_000_000
    assert not Journal.objects.filter(kind__startswith="dispute").exists()
    _books_clean()


def test_a_refund_of_an_unknown_payment_is_kept_and_reported_not_lost(client, tenant, redis_client):
    response = deliver(client, "evt_unknown", "refund.created", _refund(tenant, "re_x", 100, pi="pi_nobody"))
    assert _outcome(response) == "unattributed"
    assert StripeEvent.objects.get(event_id="evt_unknown").outcome == "unattributed"
    assert [f.check for f in check_reversals_applied()] == ["reversal_unattributed"]


def test_top_ups_work_with_a_live_mode_key(tenant, redis_client, localstripe, settings):
    settings.STRIPE_API_KEY = "sk_live_metering"
    from metering.stripe.client import clients_reset

    clients_reset()
    method = stripe_client().v1.payment_methods.create(params={"type": "card", "card": CARD})
    topup = topup_start(tenant=tenant, amount_micros=5_000_000, payment_method=method.id)
    assert str(topup.payment_intent_id).startswith("pi_")
