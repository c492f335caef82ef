"""``manage.py reconcile`` is clean on sound books and exits non-zero, naming the finding, on each kind of error."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, transaction
from django.utils import timezone

from metering.ingest import usage_ingest
from metering.ledger import JournalSpec, journals_post
from metering.models import AccountKind, PaymentReversal, ProviderInvoiceLine, UsageRecord
from metering.services import balance_topup, tenant_available_ensure
from tests.metering.conftest import make_event

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.local_servers]


def _reconcile() -> tuple[str, str | None]:
    out = StringIO()
    try:
        call_command("reconcile", stdout=out)
    except CommandError as exc:
        return out.getvalue(), str(exc)
    return out.getvalue(), None


def _negative_prepaid(tenant) -> None:
    tenant.billing_mode = "postpaid"
    tenant.save()
    usage_ingest(events=[make_event(tenant.pk, request_id="req_owed")])
    tenant.billing_mode = "prepaid"  # switched back while owing
    tenant.save()


def _unbalanced_journal(tenant) -> None:
    """Corruption the deferred trigger prevents; disabled here to prove reconciliation would see it."""
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE metering_journalline DISABLE TRIGGER metering_journalline_balanced")
    try:
        with transaction.atomic():
            spec = JournalSpec(
                key="manual:bad",
                kind="adjustment",
                tenant_id=tenant.pk,
                lines=[((tenant.pk, AccountKind.AVAILABLE), 7)],
            )
            _post_unchecked(spec)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE metering_journalline ENABLE TRIGGER metering_journalline_balanced")


def _post_unchecked(spec: JournalSpec) -> None:
    from metering import ledger

    at = timezone.now()  # lines carry their journal's created_at (the partition column)
    ids = ledger._journals_insert([spec], at)
    accounts = ledger.accounts_ensure(refs={ref for ref, _ in spec.lines})
    ledger._lines_insert([(ids[spec.key], accounts[ref], amount) for ref, amount in spec.lines], at)
    ledger._balances_apply({accounts[ref]: amount for ref, amount in spec.lines})


def _credit_without_payment(tenant) -> None:
    balance_topup(tenant=tenant, amount_micros=1_000_000, idempotency_key="topup:pi_ghost", source="stripe")


def _refund_not_applied(tenant) -> None:
    PaymentReversal.objects.create(
        stripe_id="re_lost",
        kind="refund",
        tenant=tenant,
        payment_intent_id="pi_1",
        amount_micros=1_000_000,
        status="succeeded",
    )


def _usage_without_journal(tenant) -> None:
    UsageRecord.objects.create(
        request_id="req_nojournal",
        tenant=tenant,
        key_id=1,
        model="m",
        usage_source="provider",
        cost_micros=1,
        charge_micros=1,
        status="ok",
        finished_at=timezone.now(),
        created_at=timezone.now(),
    )


def _journal_without_usage(tenant) -> None:
    spec = JournalSpec(
        key="usage:req_ghost",
        kind="usage",
        tenant_id=tenant.pk,
        lines=[((tenant.pk, AccountKind.SPENT), 1), ((None, AccountKind.PROMOTIONS), -1)],
    )
    with transaction.atomic():
        journals_post(specs=[spec], at=timezone.now())


def test_sound_books_after_top_ups_usage_refused_calls_and_refunds_reconcile_clean(tenant, redis_client):
    tenant_available_ensure(tenant=tenant)
    balance_topup(tenant=tenant, amount_micros=1_000_000, idempotency_key="promo:1", source="promotion")
    usage_ingest(events=[make_event(tenant.pk), make_event(tenant.pk, status="rejected", charge_micros=0)])
    # A provider reporting its own cost within rounding of ours (one micro-unit per request) is no drift.
    honest = make_event(tenant.pk)
    usage_ingest(events=[replace(honest, provider_cost_micros=honest.cost_micros + 1)])
    out, error = _reconcile()
    assert error is None, out
    assert "books balance: no findings" in out


def _provider_cost_drift(tenant) -> None:
    """The provider reports 5% more than our price x its tokens on every request."""
    events = [make_event(tenant.pk, provider_cost_micros=None) for _ in range(3)]
    usage_ingest(events=[replace(e, provider_cost_micros=e.cost_micros * 105 // 100) for e in events])


def _invoice_over_billed(tenant) -> None:
    """An invoice line for a day and offering billing 2% above our computation of that day's usage."""
    event = make_event(tenant.pk)
    usage_ingest(events=[event])
    day = datetime.fromtimestamp(event.finished_at, tz=UTC).date()
    ProviderInvoiceLine.objects.create(
        provider="deepseek",
        day=day,
        model="deepseek-v4-flash",
        offering_id=event.offering_id,
        amount_micros=event.cost_micros * 102 // 100,
        imported_at=timezone.now(),
    )


CASES: list[tuple[Callable[..., None], str]] = [
    (_negative_prepaid, "prepaid_balance_negative"),
    (_unbalanced_journal, "journal_unbalanced"),
    (_credit_without_payment, "credit_without_payment"),
    (_refund_not_applied, "reversal_not_applied"),
    (_usage_without_journal, "usage_without_journal"),
    (_journal_without_usage, "journal_without_usage"),
    (_provider_cost_drift, "provider_cost_drift"),
    (_invoice_over_billed, "provider_invoice_drift"),
]


@pytest.mark.parametrize(("break_books", "check"), CASES, ids=[check for _, check in CASES])
def test_each_kind_of_error_is_printed_and_exits_non_zero(tenant, redis_client, break_books, check):
    break_books(tenant)
    out, error = _reconcile()
    assert error is not None and "finding" in error
    assert f"\t{check}\t" in out
