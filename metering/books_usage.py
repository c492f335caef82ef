"""Two cross-checks of usage money for ``reconcile``: each usage journal against its usage row, and each
open hold in Redis against its expiry entry (the reaper finds holds only through that index).

Plain data out; metering.reconcile turns it into findings.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import redis
from django.db import connection

from contracts.redis_keys import HOLD_EXPIRIES, tenant_hold_expiries, tenant_holds
from metering.models import AccountKind

ROWS_LIMIT = 100  # findings of one kind per run: enough to act on, bounded on a bad day


@dataclass(frozen=True, slots=True)
class JournalOff:
    request_id: str
    charge_micros: int  # the row's
    cost_micros: int  # the row's booked provider cost
    spent_micros: int  # the journal's tenant revenue line
    paid_micros: int  # what the journal took from the tenant: its available line plus any hold shortfall
    booked_cost_micros: int  # the journal's provider cost line


# A usage row's journal moves exactly its charge: spent +charge, available (+ shortfall) -charge, and the
# provider cost it records. Lines of amount 0 are never written, so a missing kind sums to 0.
_JOURNAL_OFF = (
    "SELECT u.request_id, u.charge_micros, u.cost_micros, "
    "COALESCE(SUM(l.amount_micros) FILTER (WHERE a.kind = %s), 0), "
    "COALESCE(SUM(l.amount_micros) FILTER (WHERE a.kind IN (%s, %s)), 0), "
    "COALESCE(SUM(l.amount_micros) FILTER (WHERE a.kind = %s), 0) "
    "FROM metering_usagerecord u JOIN metering_journal j ON j.key = 'usage:' || u.request_id "
    "LEFT JOIN metering_journalline l ON l.journal_id = j.id LEFT JOIN metering_account a ON a.id = l.account_id "
    "WHERE u.created_at >= %s AND u.status <> 'rejected' "
    "GROUP BY u.request_id, u.charge_micros, u.cost_micros "
    "HAVING COALESCE(SUM(l.amount_micros) FILTER (WHERE a.kind = %s), 0) <> u.charge_micros "
    "OR COALESCE(SUM(l.amount_micros) FILTER (WHERE a.kind IN (%s, %s)), 0) <> -u.charge_micros "
    "OR COALESCE(SUM(l.amount_micros) FILTER (WHERE a.kind = %s), 0) <> u.cost_micros "
    "LIMIT %s"
)


def usage_journals_off(*, since: datetime) -> list[JournalOff]:
    """Usage rows (since ``since``) whose journal does not move exactly the row's charge and cost."""
    spent, paid, cost = (
        AccountKind.SPENT,
        (AccountKind.AVAILABLE, AccountKind.HOLD_SHORTFALL),
        AccountKind.PROVIDER_COST,
    )
    params: list[Any] = [spent, *paid, cost, since, spent, *paid, cost, ROWS_LIMIT]
    with connection.cursor() as cursor:
        cursor.execute(_JOURNAL_OFF, params)
        return [JournalOff(rid, int(a), int(b), int(c), int(d), int(e)) for rid, a, b, c, d, e in cursor.fetchall()]


def holds_without_expiry(client: redis.Redis, *, tenant_ids: Iterable[int]) -> list[tuple[int, str, int]]:
    """(tenant id, hold id, held micros) of open holds no expiry index names: the reaper never frees them,
    so the tenant's balance stays reserved forever. Each tenant is read in one MULTI (its keys share a
    slot): admission and settlement scripts write both keys atomically, so what the MULTI sees is whole."""
    members: Any = client.zrange(HOLD_EXPIRIES, 0, -1)
    legacy = {_text(m) for m in members}  # drained by the reaper; still counts
    found: list[tuple[int, str, int]] = []
    for tenant_id in tenant_ids:
        pipe = client.pipeline(transaction=True)
        pipe.hgetall(tenant_holds(tenant_id))
        pipe.zrange(tenant_hold_expiries(tenant_id), 0, -1)
        holds, members = pipe.execute()
        if not holds:
            continue
        indexed = {_text(m) for m in members} | legacy
        for hold_id, amount in holds.items():
            if f"{tenant_id}:{_text(hold_id)}" not in indexed:
                found.append((tenant_id, _text(hold_id), int(amount)))
        if len(found) >= ROWS_LIMIT:
            break
    return found


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
