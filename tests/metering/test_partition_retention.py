"""Retention detaches old months of usage and ledger, keeps their rows as named tables, and leaves every
balance right: ``manage.py reconcile`` reports no findings after a detach."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from metering.ingest import usage_ingest
from metering.ledger import JournalSpec, journals_post
from metering.models import AccountKind, Balance, LedgerCarry, UsageRecord
from metering.partitions import attached_months, month_add, month_start, partition_name
from metering.retention import RetentionTooShort, partitions_maintain
from metering.services import tenant_available_ensure
from tests.metering.conftest import make_event

pytestmark = [pytest.mark.django_db, pytest.mark.local_servers]


def scalar(sql: str, params: list[Any] | None = None) -> object:
    with connection.cursor() as cursor:
        cursor.execute(sql, params or [])
        return cursor.fetchone()[0]


def promo(key: str, tenant_id: int, amount: int) -> JournalSpec:
    return JournalSpec(
        key,
        "credit_promotion",
        tenant_id,
        [((tenant_id, AccountKind.AVAILABLE), amount), ((None, AccountKind.PROMOTIONS), -amount)],
    )


def balances() -> dict[int, int]:
    return dict(Balance.objects.values_list("account_id", "amount_micros"))


@pytest.fixture
def old_month_booked(tenant):
    """Five months ago: a credit and usage (ledger and usage rows), in months of their own."""
    tenant.billing_mode = "postpaid"
    tenant.save()
    old = month_add(month_start(timezone.now()), -5) + timedelta(days=2)
    with transaction.atomic():
        journals_post(specs=[promo("promo:old", tenant.pk, 40_000)], at=old)
    usage_ingest(
        events=[make_event(tenant.pk, request_id=f"req_old{n}", finished_at=old.timestamp()) for n in range(3)]
    )
    with transaction.atomic():
        journals_post(specs=[promo("promo:new", tenant.pk, 10_000)], at=timezone.now())
    partitions_maintain(now=timezone.now())  # retention 0: the old month gets partitions of its own
    assert month_start(old) in attached_months("metering_journalline")
    assert month_start(old) in attached_months("metering_usagerecord")
    return month_start(old)


def test_months_past_retention_are_detached_with_their_rows_and_balances_still_reconcile(
    old_month_booked, tenant, settings, redis_client
):
    month = old_month_booked
    before = balances()
    old_lines = {
        table: scalar(f"SELECT count(*) FROM {partition_name(table, month)}")
        for table in ("metering_usagerecord", "metering_journal", "metering_journalline")
    }
    settings.TOKENWAY_USAGE_RETENTION_DAYS = settings.TOKENWAY_LEDGER_RETENTION_DAYS = 90

    result = partitions_maintain(now=timezone.now())

    assert result.detached == {"usage": [f"{month:%Y-%m}"], "ledger": [f"{month:%Y-%m}"]}
    for table, count in old_lines.items():
        name = partition_name(table, month)
        assert month not in attached_months(table)
        assert scalar(f"SELECT count(*) FROM {name}") == count
    assert old_lines["metering_journal"] == 1  # the old credit; the usage journals were posted this month
    assert UsageRecord.objects.filter(request_id__startswith="req_old").count() == 0  # no longer in the table
    assert balances() == before
    carried = dict(LedgerCarry.objects.values_list("account__kind", "amount_micros"))
    assert carried == {AccountKind.AVAILABLE: 40_000, AccountKind.PROMOTIONS: -40_000}
    archived = partition_name("metering_journalline", month)
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"UPDATE {archived} SET amount_micros = 0")
    tenant_available_ensure(tenant=tenant)
    out = StringIO()
    try:
        call_command("reconcile", stdout=out)
    except CommandError as exc:
        pytest.fail(f"{exc}:\n{out.getvalue()}")
    assert "books balance: no findings" in out.getvalue()


def test_a_late_event_of_a_detached_month_is_stored_in_the_default_and_billed_once(old_month_booked, tenant, settings):
    month = old_month_booked
    settings.TOKENWAY_USAGE_RETENTION_DAYS = settings.TOKENWAY_LEDGER_RETENTION_DAYS = 90
    partitions_maintain(now=timezone.now())
    late = make_event(tenant.pk, request_id="req_late", finished_at=(month + timedelta(days=9)).timestamp())
    assert len(usage_ingest(events=[late]).inserted) == 1
    assert usage_ingest(events=[late]).duplicates == 1
    assert usage_ingest(events=[make_event(tenant.pk, request_id="req_old1")]).duplicates == 1  # detached, still once

    assert partitions_maintain(now=timezone.now()).created == {"usage": [], "ledger": []}
    assert scalar("SELECT tableoid::regclass::text FROM metering_usagerecord WHERE request_id = 'req_late'") == (
        "metering_usagerecord_default"
    )


def test_a_retention_shorter_than_two_months_is_refused_and_nothing_is_detached(old_month_booked, settings):
    settings.TOKENWAY_LEDGER_RETENTION_DAYS = 30
    with pytest.raises(RetentionTooShort):
        partitions_maintain(now=timezone.now())
    assert old_month_booked in attached_months("metering_journalline")
