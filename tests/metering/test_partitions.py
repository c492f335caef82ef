"""Monthly partitions of usage and the ledger: exactly once across months, the append-only and zero-sum
triggers on every partition, rows outside the created months kept and moved, months created ahead."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from metering import ledger
from metering.ingest import usage_ingest
from metering.ledger import JournalSpec, journals_post
from metering.models import AccountKind, Balance, Journal, JournalKey, JournalLine, UsageKey, UsageRecord
from metering.partitions import MONTHS_AHEAD, attached_months, default_name, month_add, month_start
from metering.partitions import partition_name as part
from metering.reconcile import check_balances_match_ledger, check_journals_balance
from metering.retention import partitions_maintain
from tests.metering.conftest import make_event

pytestmark = [pytest.mark.django_db, pytest.mark.local_servers]

TABLES = ("metering_usagerecord", "metering_journal", "metering_journalline")


def holder(table: str, where: str, params: list[Any]) -> list[str]:
    """The partitions holding the rows (tableoid names the partition a row sits in)."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT DISTINCT tableoid::regclass::text FROM {table} WHERE {where}", params)
        return sorted(name for (name,) in cursor.fetchall())


def execute(sql: str, params: list[Any] | None = None) -> None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params or [])


def postpaid(tenant) -> None:
    tenant.billing_mode = "postpaid"  # charges owed, never clamped at a prepaid zero
    tenant.save()


def available(tenant) -> int:
    return Balance.objects.get(account__tenant=tenant, account__kind=AccountKind.AVAILABLE).amount_micros


def test_usage_lands_in_the_month_it_finished_and_a_redelivery_stamped_another_month_is_a_duplicate(tenant):
    postpaid(tenant)
    event = make_event(tenant.pk, request_id="req_month")
    usage_ingest(events=[event])
    finished = datetime.fromtimestamp(event.finished_at, tz=UTC)
    assert holder("metering_usagerecord", "request_id = %s", ["req_month"]) == [
        part("metering_usagerecord", month_start(finished))
    ]
    # Even a copy whose time names another partition is refused: the request id is held once, unpartitioned.
    result = usage_ingest(events=[replace(event, finished_at=event.finished_at + 40 * 86_400)])
    assert (result.inserted, result.duplicates) == ([], 1)
    assert UsageRecord.objects.filter(request_id="req_month").count() == 1
    assert Journal.objects.filter(key="usage:req_month").count() == 1
    assert available(tenant) == -event.charge_micros


def test_a_journal_key_is_posted_once_whatever_month_it_is_posted_in(tenant):
    spec = JournalSpec(
        "promo:once",
        "credit_promotion",
        tenant.pk,
        [((tenant.pk, AccountKind.AVAILABLE), 700), ((None, AccountKind.PROMOTIONS), -700)],
    )
    with transaction.atomic():
        assert journals_post(specs=[spec], at=timezone.now()) == [spec]
    with transaction.atomic():
        assert journals_post(specs=[spec], at=timezone.now() + timedelta(days=70)) == []
    assert Journal.objects.filter(key="promo:once").count() == 1
    assert JournalKey.objects.filter(key="promo:once").count() == 1
    assert available(tenant) == 700


def test_update_and_delete_are_refused_on_each_ledger_partition_and_usage_rows_stay_updatable(tenant):
    postpaid(tenant)
    usage_ingest(events=[make_event(tenant.pk, request_id="req_frozen")])
    journal = Journal.objects.get(key="usage:req_frozen")
    for table, where in (("metering_journal", "id = %s"), ("metering_journalline", "journal_id = %s")):
        (partition,) = holder(table, where, [journal.pk])
        assert partition == part(table, month_start(journal.created_at))
        for sql in (
            f"UPDATE {partition} SET created_at = created_at WHERE {where}",
            f"DELETE FROM {partition} WHERE {where}",
        ):
            with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
                execute(sql, [journal.pk])
    assert JournalLine.objects.filter(journal=journal).count() == 4


def test_an_unbalanced_journal_and_a_line_naming_no_journal_are_refused_at_commit(tenant):
    at = timezone.now()
    account = ledger.accounts_ensure(refs={(tenant.pk, AccountKind.AVAILABLE)})[(tenant.pk, AccountKind.AVAILABLE)]
    with pytest.raises(DatabaseError, match="does not balance"), transaction.atomic():
        ids = ledger._journals_insert([JournalSpec("x:unbalanced", "test", tenant.pk)], at)
        ledger._lines_insert([(ids["x:unbalanced"], account, 5)], at)
        execute("SET CONSTRAINTS ALL IMMEDIATE")
    with pytest.raises(DatabaseError, match="names no journal"), transaction.atomic():
        ids = ledger._journals_insert([JournalSpec("x:elsewhere", "test", tenant.pk)], at)
        # Right id, another month: the line's (journal_id, created_at) names no journal.
        ledger._lines_insert([(ids["x:elsewhere"], account, 0)], at + timedelta(days=40))
        execute("SET CONSTRAINTS ALL IMMEDIATE")
    assert not Journal.objects.filter(key__startswith="x:").exists()


def test_maintenance_creates_every_table_s_months_ahead_of_now(db):
    later = timezone.now() + timedelta(days=200)
    result = partitions_maintain(now=later)
    wanted = {month_add(month_start(later), n) for n in range(-1, MONTHS_AHEAD + 1)}
    for table in TABLES:
        assert wanted <= attached_months(table)
    assert f"{month_add(month_start(later), MONTHS_AHEAD):%Y-%m}" in result.created["usage"]
    assert partitions_maintain(now=later).created == {"usage": [], "ledger": []}  # idempotent


def test_rows_beyond_the_created_months_wait_in_the_default_then_move_to_their_month(tenant):
    postpaid(tenant)
    far = month_add(month_start(timezone.now()), MONTHS_AHEAD + 6) + timedelta(days=3, hours=5)
    event = make_event(tenant.pk, request_id="req_far", finished_at=far.timestamp())
    usage_ingest(events=[event])
    spec = JournalSpec(
        "adjust:far",
        "adjustment",
        tenant.pk,
        [((tenant.pk, AccountKind.AVAILABLE), 900), ((None, AccountKind.PROMOTIONS), -900)],
    )
    with transaction.atomic():
        journals_post(specs=[spec], at=far)
    journal = Journal.objects.get(key="adjust:far")
    assert holder("metering_usagerecord", "request_id = %s", ["req_far"]) == ["metering_usagerecord_default"]
    assert holder("metering_journalline", "journal_id = %s", [journal.pk]) == ["metering_journalline_default"]

    result = partitions_maintain(now=timezone.now())

    assert f"{month_start(far):%Y-%m}" in result.created["usage"]
    assert f"{month_start(far):%Y-%m}" in result.created["ledger"]
    for table in TABLES:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT count(*) FROM {default_name(table)}")
            assert cursor.fetchone()[0] == 0
    assert holder("metering_usagerecord", "request_id = %s", ["req_far"]) == [
        part("metering_usagerecord", month_start(far))
    ]
    moved = part("metering_journalline", month_start(far))
    assert holder("metering_journalline", "journal_id = %s", [journal.pk]) == [moved]
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        execute(f"DELETE FROM {moved} WHERE journal_id = %s", [journal.pk])  # triggers cloned to the new month
    assert usage_ingest(events=[event]).duplicates == 1
    assert UsageKey.objects.filter(request_id="req_far").count() == 1
    assert available(tenant) == 900 - event.charge_micros
    assert check_balances_match_ledger() == [] and check_journals_balance() == []


def test_beat_runs_the_maintenance_task_daily_and_a_run_on_a_current_database_has_nothing_to_do(db):
    from metering.beat import BEAT_SCHEDULE
    from metering.tasks import partitions_maintain_task

    entry = BEAT_SCHEDULE["metering.partitions_maintain"]
    assert (entry["task"], entry["schedule"]) == ("metering.tasks.partitions_maintain", 86_400.0)
    partitions_maintain_task()  # the migration made the months around now; a first run may add none or some
    assert partitions_maintain_task() == 0
    assert month_add(month_start(timezone.now()), MONTHS_AHEAD) in attached_months("metering_usagerecord")
