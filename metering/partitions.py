"""Monthly RANGE partitions of the usage and ledger tables: names, creation ahead, rows out of the default.

Usage records are partitioned by ``finished_at`` (the event's own time: a redelivered event names the same
month), journals and their lines by ``created_at`` (posting time: a month closes for the ledger when it ends).
Monthly, not daily: retention and invoices count in months, console reads span a day to a month, and
36 partitions cover three years where daily ones would be over a thousand (planning time grows with them).

Each table has a DEFAULT partition, so a row outside the months created is still stored; the maintenance
task creates its month and moves such rows there. Creation takes an ACCESS EXCLUSIVE lock on the parent
for a moment (a metadata change, or the move of the default's few rows): ``LOCK_TIMEOUT`` bounds the wait
so ingestion is never queued behind a long query for long; a timed-out run is retried by the next one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db import connection, transaction

# A month partition is created this many months ahead of the current one (beat runs daily: 3 months is
# slack for a maintenance task that stops running unnoticed for weeks before rows land in the default).
MONTHS_AHEAD = 3
# Waiting longer than this for the parent's lock gives up (the next run retries): ingestion must not queue.
LOCK_TIMEOUT = "5s"


@dataclass(frozen=True)
class Table:
    name: str
    column: str  # the partition column


USAGE = (Table("metering_usagerecord", "finished_at"),)
# A journal and its lines share created_at, so the same month partition of both holds a whole journal.
LEDGER = (Table("metering_journal", "created_at"), Table("metering_journalline", "created_at"))
GROUPS: dict[str, tuple[Table, ...]] = {"usage": USAGE, "ledger": LEDGER}


def month_start(at: datetime) -> datetime:
    at = at.astimezone(UTC)
    return datetime(at.year, at.month, 1, tzinfo=UTC)


def month_add(month: datetime, months: int) -> datetime:
    index = month.year * 12 + month.month - 1 + months
    return datetime(index // 12, index % 12 + 1, 1, tzinfo=UTC)


def partition_name(table: str, month: datetime) -> str:
    return f"{table}_p{month:%Y_%m}"


def default_name(table: str) -> str:
    return f"{table}_default"


def _one(sql: str, params: list[Any] | None = None) -> Any:
    with connection.cursor() as cursor:
        cursor.execute(sql, params or [])
        row = cursor.fetchone()
    return row[0] if row else None


def attached_months(table: str) -> set[datetime]:
    """Months with a partition attached to the table (the default aside)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "WHERE i.inhparent = %s::regclass",
            [table],
        )
        names = [name for (name,) in cursor.fetchall()]
    prefix = f"{table}_p"
    return {
        datetime.strptime(name[len(prefix) :], "%Y_%m").replace(tzinfo=UTC) for name in names if name.startswith(prefix)
    }


def first_attached_month(table: str) -> datetime | None:
    return min(attached_months(table), default=None)


def default_months(table: Table) -> set[datetime]:
    """Months of the rows held by the table's default partition (usually none)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT DISTINCT date_trunc('month', {table.column} AT TIME ZONE 'UTC') "  # noqa: S608 - our names
            f"FROM {default_name(table.name)}"
        )
        return {month.replace(tzinfo=UTC) for (month,) in cursor.fetchall()}


def table_exists(name: str) -> bool:
    return bool(_one("SELECT to_regclass(%s) IS NOT NULL", [name]))


def month_create(*, tables: tuple[Table, ...], month: datetime) -> bool:
    """Create the month's partition of each table (one transaction), moving its rows out of the default.

    Returns False, creating nothing, when a table of that name exists unattached: a partition detached by
    retention keeps its name for the operator; its month's late rows stay in the default partition.
    """
    names = [partition_name(table.name, month) for table in tables]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
        if any(table_exists(name) for name in names):
            return False
        for table in tables:
            _partition_create(cursor, table, month)
    return True


def _partition_create(cursor: Any, table: Table, month: datetime) -> None:
    name, default = partition_name(table.name, month), default_name(table.name)
    lower, upper = month, month_add(month, 1)
    bounds = f"FOR VALUES FROM ('{lower.isoformat()}') TO ('{upper.isoformat()}')"
    in_range = f"{table.column} >= %s AND {table.column} < %s"
    # Race: a row of this month may reach the default after this check. PostgreSQL then refuses the
    # CREATE (it checks the default under its lock), the transaction rolls back and the next run moves it.
    cursor.execute(f"SELECT EXISTS (SELECT 1 FROM {default} WHERE {in_range})", [lower, upper])  # noqa: S608
    if not cursor.fetchone()[0]:
        cursor.execute(f"CREATE TABLE {name} PARTITION OF {table.name} {bounds}")
        return
    # PostgreSQL refuses a partition whose rows still sit in the default. The default is detached for the
    # move (its cloned append-only triggers go with it, so the ledger's rows may leave it), the rows go to
    # a plain table that is then attached (indexes, keys and triggers cloned), and the default comes back.
    cursor.execute(f"ALTER TABLE {table.name} DETACH PARTITION {default}")
    cursor.execute(f"CREATE TABLE {name} (LIKE {table.name} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)")
    cursor.execute(f"INSERT INTO {name} SELECT * FROM {default} WHERE {in_range}", [lower, upper])  # noqa: S608
    cursor.execute(f"DELETE FROM {default} WHERE {in_range}", [lower, upper])  # noqa: S608
    cursor.execute(f"ALTER TABLE {table.name} ATTACH PARTITION {name} {bounds}")
    cursor.execute(f"ALTER TABLE {table.name} ATTACH PARTITION {default} DEFAULT")


def months_ensure(*, tables: tuple[Table, ...], now: datetime, keep_from: datetime | None) -> list[datetime]:
    """Create the months from the previous one to ``MONTHS_AHEAD`` ahead, and a month for rows in the
    default (unless older than ``keep_from``: those stay in the default). Returns the months created."""
    current = month_start(now)
    wanted = {month_add(current, n) for n in range(-1, MONTHS_AHEAD + 1)}
    for table in tables:
        wanted |= {m for m in default_months(table) if keep_from is None or month_add(m, 1) > keep_from}
    have = set.intersection(*(attached_months(table.name) for table in tables))
    return [month for month in sorted(wanted - have) if month_create(tables=tables, month=month)]
