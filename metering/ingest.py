"""Usage events into PostgreSQL: one transaction per batch, exactly once per request id.

Each request id is inserted first into the unpartitioned ``metering_usagekey``
with ``ON CONFLICT DO NOTHING RETURNING``, and only the ids inserted there get
a usage row (in its month partition), ledger journals and meter events, in the
same statement and transaction. A batch redelivered after a crash therefore
changes nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial

from django.db import transaction
from django.utils import timezone
from orjson import dumps

from apikeys.services import api_keys_touch
from contracts.usage import UsageEvent
from foundation.redis_client import get_redis
from metering.available import tenant_available_adjust
from metering.crash import crash_point
from metering.end_states import end_state_priced
from metering.ledger import JournalSpec, journals_post, raw_cursor
from metering.models import AccountKind, MeterStatus
from metering.provider_truth import overcount_corrected, overcount_factors, provider_dispute_journal
from metering.sanitize import Priced, cache_full_price_micros, event_price
from metering.shortfall import shortfalls_record, usage_journals_clamp
from tenants.models import BillingMode, Tenant

logger = logging.getLogger(__name__)

# Column -> PostgreSQL type: the batch goes in as one array per column (INSERT ... SELECT FROM unnest),
# so the statement stays small and its parsing cost does not grow with the batch.
_COLUMNS = {
    "request_id": "text", "tenant_id": "bigint", "key_id": "bigint", "model": "text", "offering_id": "bigint",
    "provider": "text", "region": "text", "route_mode": "text", "route_reason": "text",
    "input_uncached": "bigint", "cache_read": "bigint", "cache_write_5m": "bigint", "cache_write_1h": "bigint",
    "output": "bigint", "reasoning": "bigint", "usage_source": "text", "price_version": "integer",
    "prices": "jsonb", "cost_micros": "bigint", "charge_micros": "bigint", "full_input_price_micros": "bigint",
    "status": "text", "http_status": "smallint", "stream": "boolean", "byok": "boolean", "dialect_in": "text",
    "attempts": "smallint", "cache_fingerprint": "text", "flags": "jsonb", "started_at": "timestamptz",
    "finished_at": "timestamptz", "ttft_ms": "double precision", "total_ms": "double precision",
    "created_at": "timestamptz", "error_code": "text", "route_candidates": "jsonb",
    "computed_cost_micros": "bigint", "reported_cost_micros": "bigint",
    "end_state": "text", "finish_reason": "text", "upstream_id": "text",
}  # fmt: skip
# Race: the same event delivered to two consumers at once. The key insert of the second waits on the first's
# uncommitted key, then conflicts and inserts nothing (the partitioned table's own unique key includes
# finished_at, so it alone could not hold a request id once).
_INSERT_USAGE = (
    f"WITH batch AS (SELECT * FROM unnest({', '.join(f'%s::{t}[]' for t in _COLUMNS.values())}) "  # noqa: S608
    f"AS u({', '.join(_COLUMNS)})), "
    "fresh AS (INSERT INTO metering_usagekey (request_id, finished_at) SELECT request_id, finished_at FROM batch "
    "ON CONFLICT (request_id) DO NOTHING RETURNING request_id) "
    f"INSERT INTO metering_usagerecord ({', '.join(_COLUMNS)}) "
    "SELECT * FROM batch WHERE request_id IN (SELECT request_id FROM fresh) RETURNING request_id"
)


@dataclass
class IngestResult:
    inserted: list[UsageEvent] = field(default_factory=list)
    duplicates: int = 0
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (request id or entry id, reason)
    tenant_ids: set[int] = field(default_factory=set)


def _epoch(value: float) -> datetime | None:
    return datetime.fromtimestamp(value, tz=UTC) if value and value > 0 else None


def _row(event: UsageEvent, priced: Priced, now: datetime) -> list[object]:
    tokens = priced.tokens
    prices = event.prices
    return [
        event.request_id,
        event.tenant_id,
        event.key_id,
        event.model[:100],
        event.offering_id,
        (event.provider or "")[:63],
        event.region[:32],
        event.route_mode[:16],
        event.route_reason[:200],
        tokens.input_uncached,
        tokens.cache_read,
        tokens.cache_write_5m,
        tokens.cache_write_1h,
        tokens.output,
        tokens.reasoning,
        event.usage_source[:16],
        prices.version if prices else None,
        dumps(prices).decode() if prices else None,
        0 if event.byok else priced.booked_cost_micros,
        priced.charge_micros,
        cache_full_price_micros(tokens, prices),
        event.status[:32],
        max(0, min(event.http_status, 999)),
        event.stream,
        event.byok,
        event.dialect_in[:16],
        max(1, min(event.attempts, 100)),
        (event.cache_fingerprint or "")[:128],
        dumps(list(priced.flags)).decode(),
        _epoch(event.started_at),
        _epoch(event.finished_at) or now,
        event.ttft_ms,
        max(event.total_ms, 0.0),
        now,
        event.error_code[:64],
        dumps(event.route_candidates).decode(),
        0 if event.byok else priced.cost_micros,
        priced.reported_cost_micros,
        event.end_state[:32],
        event.finish_reason[:64],
        event.upstream_id[:128],
    ]


def _insert_usage(rows: list[list[object]]) -> set[str]:
    columns = [list(column) for column in zip(*rows, strict=True)]
    with raw_cursor() as cursor:
        cursor.execute(_INSERT_USAGE, columns)
        return {rid for (rid,) in cursor.fetchall()}


def usage_journal(event: UsageEvent, priced: Priced) -> JournalSpec:
    """Tenant pays the charge; we owe the provider its cost, as the provider reported it when it did
    (BYOK: the provider bills the tenant)."""
    tid = event.tenant_id
    lines: list[tuple[tuple[int | None, str], int]] = [
        ((tid, AccountKind.AVAILABLE), -priced.charge_micros),
        ((tid, AccountKind.SPENT), priced.charge_micros),
    ]
    if not event.byok:
        lines += [
            ((None, AccountKind.PROVIDER_COST), priced.booked_cost_micros),
            ((None, AccountKind.PROVIDER_PAYABLE), -priced.booked_cost_micros),
        ]
    return JournalSpec(key=f"usage:{event.request_id}", kind="usage", tenant_id=tid, lines=lines)


def usage_ingest(*, events: list[UsageEvent]) -> IngestResult:
    """Apply a batch of usage events; safe to call again with any of them. Each is made storable first
    (contracts.storable: the gateway did, but an event may come from elsewhere, a replayed dead letter)."""
    result = IngestResult()
    unique = list({event.request_id: event for event in (e.storable() for e in events)}.values())
    tenants = Tenant.objects.in_bulk({event.tenant_id for event in unique})
    valid: list[tuple[UsageEvent, Priced]] = []
    factors = overcount_factors(get_redis())  # offerings flagged for over-counting: charged on the true count
    for event in unique:
        tenant = tenants.get(event.tenant_id)
        if tenant is None:
            result.rejected.append((event.request_id, "unknown_tenant"))
            continue
        priced = end_state_priced(event, event_price(event, markup_bps=tenant.markup_bps))
        valid.append((event, overcount_corrected(event, priced, factors=factors, markup_bps=tenant.markup_bps)))
    if not valid:
        return result
    with transaction.atomic():
        now = timezone.now()
        inserted = _insert_usage([_row(event, priced, now) for event, priced in valid])
        crash_point("mid_batch")
        fresh = [(event, priced) for event, priced in valid if event.request_id in inserted]
        billed = [(event, priced) for event, priced in fresh if event.status != "rejected"]  # refused: no money
        specs = [usage_journal(event, priced) for event, priced in billed]
        prepaid = {tid for tid, tenant in tenants.items() if tenant.billing_mode != BillingMode.POSTPAID}
        shortfalls = usage_journals_clamp(specs=specs, prepaid=prepaid)
        disputes = [spec for event, priced in billed if (spec := provider_dispute_journal(event, priced))]
        journals_post(specs=specs + disputes, at=now)
        shortfalls_record(shortfalls=shortfalls, tenants=tenants, at=now)
        _overcounts_return(billed, tenants)
        _meter_events_enqueue(billed, tenants, now)
    keys_touch(events=[event for event, _ in valid])
    result.inserted = [event for event, _ in fresh]
    result.duplicates = len(valid) - len(fresh)
    result.tenant_ids = {event.tenant_id for event in result.inserted}
    return result


def _overcounts_return(billed: list[tuple[UsageEvent, Priced]], tenants: dict[int, Tenant]) -> None:
    """The gateway settled the reported count's charge: after commit its counter gets back what the true
    count did not charge (metering.provider_truth)."""
    for event, priced in billed:
        if priced.overcount_charge_micros:
            tenant, amount = tenants[event.tenant_id], priced.overcount_charge_micros
            transaction.on_commit(partial(tenant_available_adjust, tenant=tenant, delta_micros=amount))


def keys_touch(*, events: list[UsageEvent]) -> None:
    """Each key's ``last_used_at`` moves to its newest event of the batch: one UPDATE per batch, after the
    ledger commit (a lost touch costs nothing; it is never money). Rejected calls count: the key was used."""
    last_used: dict[int, datetime] = {}
    for event in events:
        at = _epoch(event.finished_at)
        if at is not None and (event.key_id not in last_used or at > last_used[event.key_id]):
            last_used[event.key_id] = at
    if last_used:
        api_keys_touch(last_used=last_used)


def _meter_events_enqueue(fresh: list[tuple[UsageEvent, Priced]], tenants: dict[int, Tenant], now: datetime) -> None:
    """Postpaid usage goes to Stripe's meter through an outbox written with the ledger."""
    rows = [
        (event.request_id, event.tenant_id, tenants[event.tenant_id].stripe_customer_id, priced.charge_micros,
         _epoch(event.finished_at) or now)
        for event, priced in fresh
        if tenants[event.tenant_id].billing_mode == BillingMode.POSTPAID and priced.charge_micros > 0
    ]  # fmt: skip
    if not rows:
        return
    ids, tenant_ids, customers, values, stamps = (list(column) for column in zip(*rows, strict=True))
    with raw_cursor() as cursor:
        cursor.execute(
            "INSERT INTO metering_meterevent (identifier, tenant_id, customer_id, value, timestamp, status, attempts, "
            "last_error, created_at) SELECT i, t, c, v, ts, %s, 0, '', %s "
            "FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::bigint[], %s::timestamptz[]) AS u(i, t, c, v, ts) "
            "ON CONFLICT (identifier) DO NOTHING",
            [MeterStatus.PENDING.value, now, ids, tenant_ids, customers, values, stamps],
        )


def event_parse(raw: bytes | str) -> UsageEvent:
    """Parse one stream entry's ``e`` field (raises ValueError/TypeError/KeyError on garbage)."""
    return UsageEvent.from_json(raw)


def crash_after_receipt() -> None:
    crash_point("after_receipt")
