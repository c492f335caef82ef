"""Migration 0011 converts usage and ledger tables holding rows to monthly partitions, and back, keeping
every row, id, key and trigger; exactly-once holds for the rows it converted."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

from metering.ingest import usage_ingest
from metering.models import AccountKind, Balance
from tests.metering.conftest import make_event

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.local_servers]

BEFORE = ("metering", "0010_usage_reported_cost_index")
PARTITIONED = ("metering", "0011_partition_usage_and_ledger")
TABLES = ("metering_usagerecord", "metering_journal", "metering_journalline")


def migrate(target: tuple[str, str]) -> None:
    executor = MigrationExecutor(connection)
    executor.migrate([target])


def rows(sql: str) -> list[tuple[object, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return list(cursor.fetchall())


def kinds() -> dict[str, str]:
    found = rows(
        "SELECT relname, relkind FROM pg_class WHERE relname IN "
        "('metering_usagerecord', 'metering_journal', 'metering_journalline')"
    )
    return {str(name): str(kind) for name, kind in found}


def snapshot() -> dict[str, list[tuple[object, ...]]]:
    return {
        "usage": rows("SELECT id, request_id, finished_at, charge_micros FROM metering_usagerecord ORDER BY id"),
        "journals": rows("SELECT id, key, created_at FROM metering_journal ORDER BY id"),
        "lines": rows("SELECT id, journal_id, account_id, amount_micros FROM metering_journalline ORDER BY id"),
    }


def refused(sql: str) -> bool:
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql)
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    except DatabaseError:
        return True
    return False


def test_rows_survive_the_migration_back_and_forth_and_stay_billed_once(tenant):
    tenant.billing_mode = "postpaid"
    tenant.save()
    events = [make_event(tenant.pk, request_id=f"req_mig{n}") for n in range(5)]
    usage_ingest(events=events)
    before = snapshot()
    charged = Balance.objects.get(account__tenant=tenant, account__kind=AccountKind.AVAILABLE).amount_micros

    migrate(BEFORE)
    try:
        assert kinds() == dict.fromkeys(TABLES, "r")
        assert snapshot() == before
        assert refused("UPDATE metering_usagerecord SET request_id = 'req_mig0' WHERE request_id = 'req_mig1'")
        assert refused("DELETE FROM metering_journalline")
        assert refused("INSERT INTO metering_journalline (journal_id, account_id, amount_micros) VALUES (-1, 1, 0)")
        # Rows written while unpartitioned are converted forward too.
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO metering_journal (key, kind, tenant_id, memo, created_at) "
                "VALUES ('promo:between', 'credit_promotion', %s, '', now())",
                [tenant.pk],
            )
    finally:
        migrate(PARTITIONED)

    assert kinds() == dict.fromkeys(TABLES, "p")
    after = snapshot()
    assert after["usage"] == before["usage"] and after["lines"] == before["lines"]
    assert [key for _, key, _ in after["journals"]] == [key for _, key, _ in before["journals"]] + ["promo:between"]
    assert rows("SELECT count(*) FROM metering_usagekey") == [(5,)]
    assert rows("SELECT count(*) FROM metering_journalkey") == [(6,)]
    assert refused("DELETE FROM metering_journalline")
    assert refused("UPDATE metering_journal SET memo = 'x'")
    # Converted rows are still billed once; new rows take ids above the converted ones.
    result = usage_ingest(events=[*events, make_event(tenant.pk, request_id="req_after")])
    assert (len(result.inserted), result.duplicates) == (1, 5)
    assert rows("SELECT id FROM metering_usagerecord WHERE request_id = 'req_after'")[0][0] > before["usage"][-1][0]
    balance = Balance.objects.get(account__tenant=tenant, account__kind=AccountKind.AVAILABLE).amount_micros
    assert balance == charged - result.inserted[0].charge_micros
