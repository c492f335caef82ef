"""Double-entry ledger: append-only journals whose signed lines sum to zero.

Sign convention: a line's amount is added to its account's balance. A tenant's
``available`` balance is positive when it has funds (negative = owed, postpaid);
``spent`` grows with every charge and is the platform's revenue per tenant.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection, transaction

from metering.models import Account, AccountKind, Balance

AccountRef = tuple[int | None, str]  # (tenant id or None for the platform, kind)


class UnbalancedJournal(ValueError):
    """A journal's lines do not sum to zero."""


@dataclass
class JournalSpec:
    key: str  # idempotency key, unique across the ledger
    kind: str
    tenant_id: int | None
    lines: list[tuple[AccountRef, int]] = field(default_factory=list)
    memo: str = ""


def accounts_ensure(*, refs: set[AccountRef]) -> dict[AccountRef, int]:
    """Account ids for the refs, creating missing accounts (and their zero Balance rows)."""
    found = _accounts_find(refs)
    missing = refs - found.keys()
    if missing:
        # Race: two consumers may create the same account at once; the unique
        # constraints plus ignore_conflicts make the second insert a no-op.
        Account.objects.bulk_create([Account(tenant_id=tid, kind=kind) for tid, kind in missing], ignore_conflicts=True)
        found = _accounts_find(refs)
        Balance.objects.bulk_create([Balance(account_id=aid) for aid in found.values()], ignore_conflicts=True)
    return found


def _accounts_find(refs: set[AccountRef]) -> dict[AccountRef, int]:
    tenant_ids = {tid for tid, _ in refs if tid is not None}
    rows = Account.objects.filter(tenant_id__in=tenant_ids) | Account.objects.filter(tenant__isnull=True)
    return {(a.tenant_id, a.kind): a.pk for a in rows if (a.tenant_id, a.kind) in refs}


def journals_post(*, specs: list[JournalSpec], at: datetime) -> list[JournalSpec]:
    """Post the journals whose key is new; returns those posted. Must run inside a transaction."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("journals_post must run inside transaction.atomic")
    for spec in specs:
        if sum(amount for _, amount in spec.lines) != 0:
            raise UnbalancedJournal(spec.key)
    if not specs:
        return []
    ids = _journals_insert(specs, at)
    posted = [spec for spec in specs if spec.key in ids]
    accounts = accounts_ensure(refs={ref for spec in posted for ref, _ in spec.lines})
    lines = [(ids[spec.key], accounts[ref], amount) for spec in posted for ref, amount in spec.lines if amount != 0]
    _lines_insert(lines, at)
    deltas: dict[int, int] = defaultdict(int)
    for _journal_id, account_id, amount in lines:
        deltas[account_id] += amount
    _balances_apply(deltas)
    return posted


def raw_cursor() -> Any:
    """psycopg's own cursor on Django's connection (same transaction) with server-side binding:
    array parameters are sent in binary instead of being quoted into the SQL text in Python."""
    connection.ensure_connection()
    return connection.connection.cursor()


def _lines_insert(lines: list[tuple[int, int, int]], at: datetime) -> None:
    """Lines carry their journal's created_at: the partition column they share with it."""
    if not lines:
        return
    journal_ids, account_ids, amounts = (list(column) for column in zip(*lines, strict=True))
    with raw_cursor() as cursor:
        cursor.execute(
            "INSERT INTO metering_journalline (journal_id, account_id, amount_micros, created_at) "
            "SELECT j, a, m, %s FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[]) AS u(j, a, m)",
            [at, journal_ids, account_ids, amounts],
        )


# The partitioned journal table cannot hold a key unique across partitions, so the key goes first into
# metering_journalkey (unpartitioned, key = primary key) and only the keys inserted there get a journal.
# Race: two transactions posting the same key at once: the second's key insert waits for the first's
# commit, then finds the conflict and posts nothing (or inserts, if the first rolled back).
_INSERT_JOURNALS = (
    "WITH batch AS (SELECT * FROM unnest(%s::text[], %s::text[], %s::bigint[], %s::text[]) AS u(k, kind, t, m)), "
    "fresh AS (INSERT INTO metering_journalkey (key, created_at) SELECT k, %s FROM batch "
    "ON CONFLICT (key) DO NOTHING RETURNING key) "
    "INSERT INTO metering_journal (key, kind, tenant_id, memo, created_at) "
    "SELECT k, kind, t, m, %s FROM batch WHERE k IN (SELECT key FROM fresh) RETURNING key, id"
)


def _journals_insert(specs: list[JournalSpec], at: datetime) -> dict[str, int]:
    """A replayed key posts nothing."""
    with raw_cursor() as cursor:
        cursor.execute(
            _INSERT_JOURNALS,
            [[s.key for s in specs], [s.kind for s in specs], [s.tenant_id for s in specs], [s.memo[:200] for s in specs],
             at, at],
        )  # fmt: skip
        return dict(cursor.fetchall())


def _balances_apply(deltas: dict[int, int]) -> None:
    """Add each delta to its Balance row in the caller's transaction.

    Race: consumers, top-ups and webhooks update the same rows (the platform
    accounts on every batch). The additive UPDATE never loses an update, and
    locking the rows in account-id order first means two transactions never
    wait on each other in opposite orders (no deadlock).
    """
    ordered = sorted(account_id for account_id, delta in deltas.items() if delta)
    if not ordered:
        return
    list(Balance.objects.select_for_update().filter(account_id__in=ordered).order_by("account_id").values_list("pk"))
    values = ", ".join(["(%s, %s)"] * len(ordered))
    params: list[int] = []
    for account_id in ordered:
        params += [account_id, deltas[account_id]]
    sql = (
        "UPDATE metering_balance AS b SET amount_micros = b.amount_micros + v.delta, updated_at = now() "  # noqa: S608
        f"FROM (VALUES {values}) AS v(account_id, delta) WHERE b.account_id = v.account_id"
    )
    with raw_cursor() as cursor:
        cursor.execute(sql, params)


def balances_lock(*, refs: set[AccountRef]) -> dict[AccountRef, int]:
    """Lock the refs' Balance rows (creating missing accounts) and return their amounts. Inside a transaction.

    Race: a service that reads a balance to decide how much to post (a floor, a shortfall) must hold the
    rows until its journals commit. Rows are locked in account-id order, the order ``_balances_apply``
    uses, so two transactions never wait on each other in opposite orders.
    """
    accounts = accounts_ensure(refs=refs)
    rows = Balance.objects.select_for_update().filter(account_id__in=accounts.values()).order_by("account_id")
    amounts = dict(rows.values_list("account_id", "amount_micros"))
    return {ref: int(amounts[account_id]) for ref, account_id in accounts.items()}


def tenant_account_balance(*, tenant_id: int, kind: str = AccountKind.AVAILABLE) -> int:
    row = Balance.objects.filter(account__tenant_id=tenant_id, account__kind=kind).values_list(
        "amount_micros", flat=True
    )
    return int(row.first() or 0)
