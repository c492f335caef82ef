from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction
from django.db.models import Sum
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contracts.usage import Prices, Tokens
from metering.ingest import usage_ingest
from metering.ledger import JournalSpec, UnbalancedJournal, journals_post
from metering.models import AccountKind, Balance, Journal, JournalLine
from tests.metering.conftest import make_event

pytestmark = [pytest.mark.django_db, pytest.mark.local_servers]


def _lines(key: str) -> dict[tuple[int | None, str], int]:
    return {
        (line.account.tenant_id, line.account.kind): line.amount_micros
        for line in JournalLine.objects.filter(journal__key=key).select_related("account")
    }


def _postpaid(tenant) -> None:
    """Charges owed rather than clamped: a prepaid tenant's balance never goes below zero (test_shortfall)."""
    tenant.billing_mode = "postpaid"
    tenant.save()


def test_golden_usage_event_becomes_four_balanced_lines(tenant):
    tenant.markup_bps, tenant.billing_mode = 1500, "postpaid"  # owed, not clamped at a prepaid zero balance
    tenant.save()
    # 1200 uncached x $2 + 800 cache read x $0.5 + 250 output x $8 + 50 reasoning x $8 (per 1M) = 5,200 micros
    event = make_event(tenant.pk, markup_bps=1500, request_id="req_golden")
    assert event.cost_micros == 5_200
    assert event.charge_micros == 5_980  # +15%, rounded up
    usage_ingest(events=[event])
    assert _lines("usage:req_golden") == {
        (tenant.pk, AccountKind.AVAILABLE): -5_980,
        (tenant.pk, AccountKind.SPENT): 5_980,
        (None, AccountKind.PROVIDER_COST): 5_200,
        (None, AccountKind.PROVIDER_PAYABLE): -5_200,
    }


def test_byok_event_books_the_fee_only(tenant):
    _postpaid(tenant)
    event = make_event(tenant.pk, byok=True, request_id="req_byok")
    assert event.charge_micros == 260  # 5% of 5,200
    usage_ingest(events=[event])
    assert _lines("usage:req_byok") == {(tenant.pk, AccountKind.AVAILABLE): -260, (tenant.pk, AccountKind.SPENT): 260}


def test_negative_and_absurd_counts_are_clamped_flagged_and_never_billed_negative(tenant):
    _postpaid(tenant)
    bad = Tokens(input_uncached=-500, cache_read=100, output=-3, reasoning=40)
    event = make_event(tenant.pk, request_id="req_bad", tokens=bad, cost_micros=-999, charge_micros=-999)
    usage_ingest(events=[event])
    lines = _lines("usage:req_bad")
    assert lines[(tenant.pk, AccountKind.AVAILABLE)] == -50  # only the 100 cache reads at $0.5/1M
    from metering.models import UsageRecord

    record = UsageRecord.objects.get(request_id="req_bad")
    assert record.input_uncached == 0 and record.output == 0 and record.reasoning == 0
    assert {"clamped_input_uncached", "clamped_output", "clamped_reasoning", "cost_recomputed"} <= set(record.flags)
    assert record.charge_micros >= 0


def test_unbalanced_journal_is_refused_in_python_and_by_the_database(tenant):
    with pytest.raises(UnbalancedJournal), transaction.atomic():
        journals_post(
            specs=[JournalSpec("x:1", "test", tenant.pk, [((tenant.pk, AccountKind.AVAILABLE), 5)])],
            at=timezone.now(),
        )
    spec = JournalSpec("x:2", "test", tenant.pk, [((tenant.pk, AccountKind.AVAILABLE), 5), ((None, "promotions"), -5)])
    with transaction.atomic():
        journals_post(specs=[spec], at=timezone.now())
    journal = Journal.objects.get(key="x:2")
    account = JournalLine.objects.filter(journal=journal).select_related("account").get(amount_micros=5).account
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO metering_journalline (journal_id, account_id, amount_micros) VALUES (%s, %s, 1)",
            [journal.pk, account.pk],
        )
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def test_ledger_lines_cannot_be_updated_or_deleted(tenant):
    usage_ingest(events=[make_event(tenant.pk, request_id="req_immutable")])
    with pytest.raises(DatabaseError), transaction.atomic():
        JournalLine.objects.filter(journal__key="usage:req_immutable").update(amount_micros=0)
    with pytest.raises(DatabaseError), transaction.atomic():
        Journal.objects.filter(key="usage:req_immutable").delete()


token_counts = st.integers(min_value=-1_000, max_value=2_000_000)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    batches=st.lists(
        st.lists(
            st.tuples(token_counts, token_counts, token_counts, token_counts, st.integers(0, 5000), st.booleans()),
            min_size=1,
            max_size=8,
        ),
        min_size=1,
        max_size=4,
    ),
    price=st.integers(min_value=0, max_value=80_000_000),
)
def test_property_lines_sum_to_zero_and_balances_equal_their_entries(tenant, batches, price):
    prices = Prices(input=price, output=price * 4, cache_read=price // 10, cache_write_5m=price + price // 4)
    for batch in batches:
        events = [
            make_event(
                tenant.pk,
                tokens=Tokens(input_uncached=a, cache_read=b, cache_write_5m=c, output=d),
                prices=prices,
                markup_bps=markup,
                byok=byok,
            )
            for a, b, c, d, markup, byok in batch
        ]
        usage_ingest(events=events + events[:1])  # a duplicate in the batch changes nothing
    per_journal = JournalLine.objects.values("journal_id").annotate(s=Sum("amount_micros"))
    assert all(row["s"] == 0 for row in per_journal)
    for balance in Balance.objects.all():
        entries = JournalLine.objects.filter(account_id=balance.account_id).aggregate(s=Sum("amount_micros"))["s"]
        assert balance.amount_micros == (entries or 0)
    spent = Balance.objects.get(account__tenant=tenant, account__kind=AccountKind.SPENT).amount_micros
    assert spent >= 0
