"""Retention: month partitions older than the retention window are detached, never dropped.

A detached partition keeps its name (``metering_usagerecord_p2025_01``) so an operator can archive or drop
it; a detached ledger partition also gets the append-only trigger back, so it stays as it was until then.
Before the ledger's lines leave, each account's Σ over them is added to its ``LedgerCarry`` row in the
same transaction: balance = carry + Σ of the attached lines still holds, and reconciliation checks that.

DETACH ... CONCURRENTLY is not allowed on a table with a DEFAULT partition, so the detach is the plain
one: a short ACCESS EXCLUSIVE lock on the parent (no scan), bounded by ``partitions.LOCK_TIMEOUT``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction

from metering.partitions import (
    GROUPS,
    LEDGER,
    LOCK_TIMEOUT,
    Table,
    attached_months,
    month_add,
    month_start,
    months_ensure,
    partition_name,
)

logger = logging.getLogger(__name__)

# Shortest retention accepted: reconciliation cross-checks usage and journals 2 days back, and the current
# and previous months must stay attached whatever the setting.
MIN_RETENTION_DAYS = 62


class RetentionTooShort(ValueError):
    """A retention setting below MIN_RETENTION_DAYS (0 means keep everything)."""


@dataclass
class MaintenanceResult:
    created: dict[str, list[str]] = field(default_factory=dict)  # group -> months created (YYYY-MM)
    detached: dict[str, list[str]] = field(default_factory=dict)  # group -> months detached


def retention_days() -> dict[str, int]:
    days = {"usage": settings.TOKENWAY_USAGE_RETENTION_DAYS, "ledger": settings.TOKENWAY_LEDGER_RETENTION_DAYS}
    for group, value in days.items():
        if value and value < MIN_RETENTION_DAYS:
            raise RetentionTooShort(f"{group} retention of {value} days is below {MIN_RETENTION_DAYS}")
    return days


def keep_from(*, now: datetime, days: int) -> datetime | None:
    """The first month kept: months ending on or before ``now - days`` are detached (None: keep all)."""
    return month_start(now - timedelta(days=days)) if days else None


def partitions_maintain(*, now: datetime) -> MaintenanceResult:
    """Create months ahead (and for stray rows in the defaults); detach months past retention."""
    result = MaintenanceResult()
    for group, days in retention_days().items():
        tables, first_kept = GROUPS[group], keep_from(now=now, days=days)
        result.created[group] = [f"{m:%Y-%m}" for m in months_ensure(tables=tables, now=now, keep_from=first_kept)]
        result.detached[group] = [f"{m:%Y-%m}" for m in _expired(tables, first_kept) if _detach(tables, m)]
    return result


def _expired(tables: tuple[Table, ...], first_kept: datetime | None) -> list[datetime]:
    if first_kept is None:
        return []
    months = set.union(*(attached_months(table.name) for table in tables))
    return sorted(month for month in months if month_add(month, 1) <= first_kept)


def _detach(tables: tuple[Table, ...], month: datetime) -> bool:
    """Detach the month from every table of the group in one transaction (ledger: carry its sums first)."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
        for table in tables:
            name = partition_name(table.name, month)
            if name not in {partition_name(table.name, m) for m in attached_months(table.name)}:
                continue
            cursor.execute(f"ALTER TABLE {table.name} DETACH PARTITION {name}")
            if tables == LEDGER:
                cursor.execute(
                    f"CREATE TRIGGER {name}_append_only BEFORE UPDATE OR DELETE ON {name} "
                    "FOR EACH ROW EXECUTE FUNCTION metering_refuse_change()"
                )
        if tables == LEDGER:
            _carry(partition_name("metering_journalline", month), through=month_add(month, 1))
    logger.info("detached %s partitions of %s", month.strftime("%Y-%m"), ", ".join(t.name for t in tables))
    return True


def _carry(lines_table: str, *, through: datetime) -> None:
    """Add each account's Σ over the detached lines to its carry row. The table is detached already in this
    transaction, so no line can reach it between the sum and the detach."""
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO metering_ledgercarry (account_id, amount_micros, through) "  # noqa: S608 - our name
            f"SELECT account_id, SUM(amount_micros), %s FROM {lines_table} GROUP BY account_id "
            "ON CONFLICT (account_id) DO UPDATE SET amount_micros = metering_ledgercarry.amount_micros "
            "+ EXCLUDED.amount_micros, through = GREATEST(metering_ledgercarry.through, EXCLUDED.through)",
            [through],
        )
