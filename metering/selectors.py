"""Reads for the API, the console and the operators' billing dashboard: plain dicts and lists."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from django.db.models import Count, F, Min, Q, QuerySet, Sum
from django.db.models.functions import TruncDay
from django.utils import timezone

from contracts.redis_keys import generation
from metering.alerts import month_start
from metering.alerts import tenant_month_spend_micros as tenant_month_spend_micros  # re-exported: a read
from metering.cursors import BadCursor as BadCursor  # re-exported: generations_list raises it
from metering.cursors import cursor_decode, cursor_encode
from metering.ledger import tenant_account_balance
from metering.models import (
    AccountKind,
    Balance,
    Journal,
    MeterEvent,
    MeterStatus,
    Notification,
    PaymentReversal,
    ReconciliationFinding,
    ReversalKind,
    SpendAlert,
    TopUp,
    UsageRecord,
)
from tenants.models import BillingMode, Tenant
from tokenway.redis_client import get_redis

USAGE_GROUPS = {"day": "day", "model": "model", "provider": "provider", "key": "key_id"}


def _tokens(rec: dict[str, Any]) -> dict[str, int]:
    names = ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output", "reasoning")
    return {name: int(rec.get(name) or 0) for name in names}


def generation_get(*, tenant_id: int, request_id: str) -> dict[str, Any] | None:
    """The per-request record: PostgreSQL when ingested, else the gateway's short-lived Redis copy."""
    record = UsageRecord.objects.filter(request_id=request_id, tenant_id=tenant_id).first()
    if record is not None:
        return _generation_from_record(record)
    raw = get_redis().get(generation(request_id))
    if raw is None:
        return None
    event = orjson.loads(raw)
    if event.get("tenant_id") != tenant_id:
        return None
    return _generation_from_event(event)


def generation_costs_get(*, request_id: str) -> dict[str, Any] | None:
    """Staff only: one ingested request with what the provider costs us beside what the tenant pays
    (booked, ours and the provider's own figure) and the margin. Never for a tenant-facing page."""
    record = UsageRecord.objects.filter(request_id=request_id).select_related("tenant").first()
    if record is None:
        return None
    return {
        **_generation_from_record(record),
        "tenant": record.tenant.slug,
        "cost_micros": record.cost_micros,
        "computed_cost_micros": record.computed_cost_micros,
        "reported_cost_micros": record.reported_cost_micros,
        "margin_micros": record.charge_micros - record.cost_micros,
    }


def _generation_from_record(r: UsageRecord) -> dict[str, Any]:
    return {
        "id": r.request_id,
        "ingested": True,
        "key_id": r.key_id,
        "model": r.model,
        "provider": r.provider,
        "offering_id": r.offering_id,
        "region": r.region,
        "route_mode": r.route_mode,
        "route_reason": r.route_reason,
        "tokens": _tokens(r.__dict__),
        "usage_source": r.usage_source,
        "price_version": r.price_version,
        "charge_micros": r.charge_micros,  # the tenant's charge only: provider cost is staff data (issue 12)
        "cache": {"read_tokens": r.cache_read, "saved_micros": _saved(r), "fingerprint": r.cache_fingerprint},
        "timings": {"ttft_ms": r.ttft_ms, "total_ms": r.total_ms, "finished_at": r.finished_at.isoformat()},
        "status": r.status,
        "http_status": r.http_status,
        "error_code": r.error_code,
        "end_state": r.end_state,
        "finish_reason": r.finish_reason,
        "upstream_id": r.upstream_id,
        "stream": r.stream,
        "byok": r.byok,
        "attempts": r.attempts,
        "flags": r.flags,
        "route_candidates": r.route_candidates,
    }


def _saved(r: UsageRecord) -> int:
    if not r.prices:
        return 0
    cache_cost = -(-r.cache_read * int(r.prices.get("cache_read") or 0) // 1_000_000)
    return max(r.full_input_price_micros - cache_cost, 0)


def _generation_from_event(e: dict[str, Any]) -> dict[str, Any]:
    tokens = _tokens(e.get("tokens") or {})
    finished = e.get("finished_at") or 0
    return {
        "id": e["request_id"],
        "ingested": False,
        "key_id": e.get("key_id"),
        "model": e.get("model"),
        "provider": e.get("provider"),
        "offering_id": e.get("offering_id"),
        "region": e.get("region"),
        "route_mode": e.get("route_mode"),
        "route_reason": e.get("route_reason"),
        "tokens": tokens,
        "usage_source": e.get("usage_source"),
        "price_version": (e.get("prices") or {}).get("version"),
        "charge_micros": max(int(e.get("charge_micros") or 0), 0),
        "cache": {"read_tokens": tokens["cache_read"], "saved_micros": None, "fingerprint": e.get("cache_fingerprint")},
        "timings": {
            "ttft_ms": e.get("ttft_ms"),
            "total_ms": e.get("total_ms"),
            "finished_at": datetime.fromtimestamp(finished, tz=UTC).isoformat() if finished else None,
        },
        "status": e.get("status"),
        "http_status": e.get("http_status"),
        "error_code": e.get("error_code") or "",
        "end_state": e.get("end_state") or "",
        "finish_reason": e.get("finish_reason") or "",
        "upstream_id": e.get("upstream_id") or "",
        "stream": e.get("stream"),
        "byok": e.get("byok"),
        "attempts": e.get("attempts"),
        "flags": e.get("flags") or [],
        "route_candidates": e.get("route_candidates") or [],
    }


@dataclass(frozen=True)
class GenerationFilter:
    """What a generations list may be narrowed by (None: any)."""

    key_id: int | None = None
    model: str | None = None
    provider: str | None = None
    status: str | None = None
    since: datetime | None = None  # finished at or after
    until: datetime | None = None  # finished before


@dataclass(frozen=True)
class GenerationPage:
    data: list[dict[str, Any]]
    next_cursor: str | None

    @property
    def has_more(self) -> bool:
        return self.next_cursor is not None


def generations_list(
    *, tenant_id: int, where: GenerationFilter | None = None, cursor: str | None = None, limit: int = 20
) -> GenerationPage:
    """Ingested requests of one tenant, newest first, rejected ones included. Keyset pagination on
    (finished_at, id): a page is one index range scan however deep, and rows ingested meanwhile never
    shift the pages (they land before the first). Raises ``BadCursor`` on a cursor not made here."""
    rows = UsageRecord.objects.filter(tenant_id=tenant_id, **_filter_kwargs(where or GenerationFilter()))
    if cursor:
        at, row_id = cursor_decode(cursor)
        rows = rows.filter(Q(finished_at__lt=at) | Q(finished_at=at, id__lt=row_id))
    page = list(rows.order_by("-finished_at", "-id")[: limit + 1])
    more = len(page) > limit
    page = page[:limit]
    return GenerationPage(
        [_generation_from_record(r) for r in page],
        cursor_encode(page[-1].finished_at, page[-1].pk) if more else None,
    )


def _filter_kwargs(where: GenerationFilter) -> dict[str, Any]:
    names = {"key_id": "key_id", "model": "model", "provider": "provider", "status": "status",
             "since": "finished_at__gte", "until": "finished_at__lt"}  # fmt: skip
    return {lookup: getattr(where, name) for name, lookup in names.items() if getattr(where, name) is not None}


def key_summary(*, api_key: Any) -> dict[str, Any]:
    """GET /api/v1/key: the key's limits and month spend, the tenant's balance."""
    tenant: Tenant = api_key.tenant
    start = month_start()
    key_spend = UsageRecord.objects.filter(tenant=tenant, key_id=api_key.pk, finished_at__gte=start).aggregate(
        s=Sum("charge_micros")
    )["s"]
    balance = tenant_account_balance(tenant_id=tenant.pk)
    postpaid = tenant.billing_mode == BillingMode.POSTPAID
    return {
        "key": {
            "id": api_key.pk,
            "name": api_key.name,
            "prefix": api_key.prefix,
            "limits": {
                "rpm": api_key.rpm_limit,
                "tpm": api_key.tpm_limit,
                "max_concurrency": api_key.max_concurrency,
                "monthly_budget_micros": api_key.monthly_budget_micros,
            },
            "spend_this_month_micros": int(key_spend or 0),
        },
        "tenant": {
            "slug": tenant.slug,
            "billing_mode": tenant.billing_mode,
            "balance_micros": balance,
            "credit_limit_micros": tenant.credit_limit_micros if postpaid else None,
            "spendable_micros": balance + (tenant.credit_limit_micros if postpaid else 0),
            "spend_this_month_micros": tenant_month_spend_micros(tenant_id=tenant.pk),
            "monthly_spend_limit_micros": tenant.monthly_spend_limit_micros,
        },
    }


def tenant_usage(
    *, tenant_id: int | None, start: datetime, end: datetime, group: str, with_cost: bool = False
) -> list[dict[str, Any]]:
    """Usage of one tenant (None: the whole platform, for the ops dashboard) grouped by day, model,
    provider or key, for the console and CSV export. Rejected calls are not usage (no tokens, no money):
    they are counted only in the generations list."""
    rows = UsageRecord.objects.filter(finished_at__gte=start, finished_at__lt=end).exclude(status="rejected")
    if tenant_id is not None:
        rows = rows.filter(tenant_id=tenant_id)
    field = USAGE_GROUPS[group]
    if group == "day":
        rows = rows.annotate(day=TruncDay("finished_at"))
    out = (
        rows.values(field)
        .annotate(
            requests=Count("id"),
            input_tokens=Sum(F("input_uncached") + F("cache_read") + F("cache_write_5m") + F("cache_write_1h")),
            cache_read_tokens=Sum("cache_read"),
            output_tokens=Sum("output"),
            charge_micros=Sum("charge_micros"),
            **({"cost_micros": Sum("cost_micros")} if with_cost else {}),  # provider cost: staff only
        )
        .order_by(field)
    )
    result = []
    for row in out:
        value = row[field]
        result.append({group: value.date().isoformat() if group == "day" else value, **_ints(row, field)})
    return result


def _ints(row: dict[str, Any], skip: str) -> dict[str, int]:
    return {k: int(v or 0) for k, v in row.items() if k != skip}


def platform_overview(*, start: datetime, end: datetime) -> dict[str, Any]:
    """Admin dashboard: revenue, provider cost, margin, cache savings, per-tenant and per-model usage
    (rejected calls excluded, as in ``tenant_usage``)."""
    rows = UsageRecord.objects.filter(finished_at__gte=start, finished_at__lt=end).exclude(status="rejected")
    totals = rows.aggregate(
        requests=Count("id"),
        revenue=Sum("charge_micros"),
        cost=Sum("cost_micros"),
        full_cache=Sum("full_input_price_micros"),
        flagged=Count("id", filter=~Q(flags=[])),
    )
    revenue, cost = int(totals["revenue"] or 0), int(totals["cost"] or 0)
    return {
        "requests": totals["requests"],
        "revenue_micros": revenue,
        "provider_cost_micros": cost,
        "margin_micros": revenue - cost,
        "margin_bps": (revenue - cost) * 10_000 // revenue if revenue else 0,
        "cache_savings_micros": cache_savings_micros(start=start, end=end),
        "flagged_requests": totals["flagged"],
        "per_tenant": _top(rows, "tenant__slug"),
        "per_model": _top(rows, "model"),
        "per_provider": _top(rows, "provider"),
    }


def _top(rows: Any, field: str) -> list[dict[str, Any]]:
    agg = rows.values(field).annotate(
        requests=Count("id"), revenue_micros=Sum("charge_micros"), cost_micros=Sum("cost_micros")
    )
    return [
        {"name": r[field], "requests": r["requests"], "revenue_micros": int(r["revenue_micros"] or 0),
         "cost_micros": int(r["cost_micros"] or 0)}
        for r in agg.order_by("-revenue_micros")[:50]
    ]  # fmt: skip


def cache_savings_micros(*, start: datetime, end: datetime, tenant_id: int | None = None) -> int:
    """What cache reads saved: their tokens at the full input price minus at the cache-read price."""
    rows = UsageRecord.objects.filter(finished_at__gte=start, finished_at__lt=end, cache_read__gt=0)
    if tenant_id is not None:
        rows = rows.filter(tenant_id=tenant_id)
    saved = 0
    for record in rows.only("cache_read", "prices", "full_input_price_micros").iterator(chunk_size=2000):
        saved += _saved(record)
    return saved


def ledger_totals() -> dict[str, int]:
    """Platform-wide balances by account kind (revenue = Σ tenant spent)."""
    agg = Balance.objects.values("account__kind").annotate(total=Sum("amount_micros"))
    totals = {row["account__kind"]: int(row["total"] or 0) for row in agg}
    return {
        "revenue_micros": totals.get(AccountKind.SPENT, 0),
        "provider_cost_micros": totals.get(AccountKind.PROVIDER_COST, 0),
        "tenant_funds_micros": totals.get(AccountKind.AVAILABLE, 0),
        "stripe_received_micros": -totals.get(AccountKind.STRIPE_CLEARING, 0),
        "promotions_micros": -totals.get(AccountKind.PROMOTIONS, 0),
    }


def stripe_sync_status() -> dict[str, Any]:
    """Meter outbox health: backlog, oldest pending age, failures, expired (reconciliation)."""
    now = timezone.now()
    pending = MeterEvent.objects.filter(status=MeterStatus.PENDING)
    oldest = pending.order_by("created_at").values_list("created_at", flat=True).first()
    return {
        "pending": pending.count(),
        "lag_seconds": (now - oldest).total_seconds() if oldest else 0.0,
        "failing": pending.exclude(last_error="").count(),
        "expired": MeterEvent.objects.filter(status=MeterStatus.EXPIRED).count(),
        "sent_last_hour": MeterEvent.objects.filter(sent_at__gte=now - timedelta(hours=1)).count(),
    }


def billing_latency(*, since: datetime | None = None) -> dict[str, float | None]:
    """Request end -> ledger (ingestion) and -> Stripe accepted, p50/p99 in milliseconds."""
    since = since or timezone.now() - timedelta(hours=1)
    ingest = list(
        UsageRecord.objects.filter(created_at__gte=since)
        .annotate(lag=F("created_at") - F("finished_at"))
        .values_list("lag", flat=True)[:100_000]
    )
    meter = list(
        MeterEvent.objects.filter(sent_at__gte=since)
        .annotate(lag=F("sent_at") - F("timestamp"))
        .values_list("lag", flat=True)[:100_000]
    )
    return {
        "ledger_p50_ms": _pct(ingest, 50),
        "ledger_p99_ms": _pct(ingest, 99),
        "stripe_p50_ms": _pct(meter, 50),
        "stripe_p99_ms": _pct(meter, 99),
    }


def _pct(values: list[timedelta], pct: int) -> float | None:
    if not values:
        return None
    ordered = sorted(v.total_seconds() * 1000 for v in values)
    return ordered[min(len(ordered) - 1, len(ordered) * pct // 100)]


def findings_open(*, limit: int = 100) -> list[dict[str, Any]]:
    rows = ReconciliationFinding.objects.filter(resolved_at__isnull=True).order_by("-run_at")[:limit]
    return [
        {"run_at": f.run_at.isoformat(), "check": f.check_name, "severity": f.severity, "subject": f.subject,
         "detail": f.detail}
        for f in rows
    ]  # fmt: skip


INVOICE_JOURNAL_KIND = "credit_invoice"  # what balance_topup(source="invoice") posts for a paid Stripe invoice
INVOICE_KEY_PREFIX = "invoice:"  # webhooks key invoice credits by the Stripe invoice id
TOPUPS_SHOWN = 20  # the billing page's top-up history: a year and more of monthly top-ups
NOTIFICATIONS_SHOWN = 10
INVOICES_SHOWN = 24  # two years of monthly invoices


def tenant_balance_micros(*, tenant_id: int) -> int:
    """The tenant's available ledger balance (negative = owed, postpaid)."""
    return tenant_account_balance(tenant_id=tenant_id)


def tenant_topups(*, tenant_id: int, limit: int = TOPUPS_SHOWN) -> QuerySet[TopUp]:
    return TopUp.objects.filter(tenant_id=tenant_id).order_by("-created_at", "-pk")[:limit]


def tenant_topup_get(*, tenant_id: int, topup_id: int) -> TopUp | None:
    """One top-up of the tenant; another tenant's id is None like an unknown one."""
    return TopUp.objects.filter(tenant_id=tenant_id, pk=topup_id).first()


def tenant_spend_alerts(*, tenant_id: int) -> QuerySet[SpendAlert]:
    return SpendAlert.objects.filter(tenant_id=tenant_id).order_by("threshold_micros", "pk")


def tenant_notifications(*, tenant_id: int, limit: int = NOTIFICATIONS_SHOWN) -> QuerySet[Notification]:
    return Notification.objects.filter(tenant_id=tenant_id).order_by("-created_at", "-pk")[:limit]


def tenant_invoices(*, tenant_id: int, limit: int = INVOICES_SHOWN) -> list[dict[str, Any]]:
    """Paid Stripe invoices (postpaid tenants), newest first, from the ledger credits their payment posted:
    number (Stripe's invoice id), amount_micros, status, paid_at, url (Stripe's hosted page when it sent one)."""
    credited = Sum("lines__amount_micros", filter=Q(lines__account__kind=AccountKind.AVAILABLE))
    rows = (
        Journal.objects.filter(tenant_id=tenant_id, kind=INVOICE_JOURNAL_KIND)
        .annotate(amount=credited)
        .order_by("-created_at", "-pk")[:limit]
    )
    return [
        {"number": j.key.removeprefix(INVOICE_KEY_PREFIX), "amount_micros": int(j.amount or 0), "status": "paid",
         "paid_at": j.created_at, "url": j.memo if j.memo.startswith("https://") else None}
        for j in rows
    ]  # fmt: skip


# --- Operators' money view: cash moved, liabilities, Stripe sync per tenant (ops dashboard) -----------

REFUNDED = ("succeeded", "pending", "requires_action")  # Stripe is returning (or has returned) the money
DISPUTE_LOST = "lost"
OPS_TENANTS_SHOWN = 50


def cash_overview(*, start: datetime, end: datetime) -> dict[str, int]:
    """Cash that moved in [start, end) — top-ups received, refunds and lost disputes paid back — and,
    now, the prepaid liability (Σ positive tenant balances) and what postpaid tenants owe."""
    topups = TopUp.objects.filter(status="succeeded", completed_at__gte=start, completed_at__lt=end).aggregate(
        n=Count("id"), total=Sum("amount_micros")
    )
    reversals = PaymentReversal.objects.filter(created_at__gte=start, created_at__lt=end)
    refunds = reversals.filter(kind=ReversalKind.REFUND, status__in=REFUNDED).aggregate(
        n=Count("id"), total=Sum("amount_micros")
    )
    disputes = reversals.filter(kind=ReversalKind.DISPUTE, status=DISPUTE_LOST).aggregate(
        n=Count("id"), total=Sum("amount_micros")
    )
    balances = Balance.objects.filter(account__kind=AccountKind.AVAILABLE)
    liability = balances.filter(amount_micros__gt=0).aggregate(total=Sum("amount_micros"))["total"]
    owed = balances.filter(amount_micros__lt=0).aggregate(total=Sum("amount_micros"))["total"]
    return {
        "topups": int(topups["n"]),
        "topup_cash_micros": int(topups["total"] or 0),
        "refunds": int(refunds["n"]),
        "refunds_micros": int(refunds["total"] or 0),
        "disputes_lost": int(disputes["n"]),
        "disputes_lost_micros": int(disputes["total"] or 0),
        "prepaid_liability_micros": int(liability or 0),
        "postpaid_owed_micros": -int(owed or 0),
    }


def _meter_by_tenant(tenant_ids: list[int] | None, now: datetime) -> dict[int, dict[str, Any]]:
    events = MeterEvent.objects.all() if tenant_ids is None else MeterEvent.objects.filter(tenant_id__in=tenant_ids)
    pending = Q(status=MeterStatus.PENDING)
    rows = events.values("tenant_id").annotate(
        pending=Count("id", filter=pending),
        failing=Count("id", filter=pending & ~Q(last_error="")),
        expired=Count("id", filter=Q(status=MeterStatus.EXPIRED)),
        rejected=Count("id", filter=Q(status=MeterStatus.REJECTED)),
        sent=Count("id", filter=Q(status=MeterStatus.SENT)),
        oldest=Min("created_at", filter=pending),
    )
    return {
        r["tenant_id"]: {**{k: r[k] for k in ("pending", "failing", "expired", "rejected", "sent")},
                         "lag_seconds": (now - r["oldest"]).total_seconds() if r["oldest"] else 0.0}
        for r in rows
    }  # fmt: skip


def tenants_billing_state(
    *, start: datetime, end: datetime, tenant_ids: list[int] | None = None, limit: int = OPS_TENANTS_SHOWN
) -> list[dict[str, Any]]:
    """Per tenant with any money activity, highest revenue first: id, slug, name, billing mode, balance,
    revenue and provider cost in [start, end), top-ups by status, and its Stripe meter sync (pending,
    failing, expired, rejected, sent, lag of the oldest pending event in seconds)."""
    now = timezone.now()
    usage = UsageRecord.objects.filter(finished_at__gte=start, finished_at__lt=end).exclude(status="rejected")
    topups = TopUp.objects.filter(created_at__gte=start, created_at__lt=end)
    balances = Balance.objects.filter(account__kind=AccountKind.AVAILABLE)
    if tenant_ids is not None:
        usage, topups = usage.filter(tenant_id__in=tenant_ids), topups.filter(tenant_id__in=tenant_ids)
        balances = balances.filter(account__tenant_id__in=tenant_ids)
    money = {
        r["tenant_id"]: r
        for r in usage.values("tenant_id").annotate(
            requests=Count("id"), revenue=Sum("charge_micros"), cost=Sum("cost_micros")
        )
    }
    paid = {
        r["tenant_id"]: r
        for r in topups.values("tenant_id").annotate(
            succeeded=Count("id", filter=Q(status="succeeded")),
            cash=Sum("amount_micros", filter=Q(status="succeeded")),
            failed=Count("id", filter=Q(status="failed")),
            pending=Count("id", filter=Q(status="pending")),
        )
    }
    balance = {
        r["account__tenant_id"]: int(r["amount_micros"]) for r in balances.values("account__tenant_id", "amount_micros")
    }
    meter = _meter_by_tenant(tenant_ids, now)
    ids = set(money) | set(paid) | set(meter) | {t for t, amount in balance.items() if amount}
    if tenant_ids is not None:
        ids |= set(tenant_ids)
    none: dict[str, Any] = {"pending": 0, "failing": 0, "expired": 0, "rejected": 0, "sent": 0, "lag_seconds": 0.0}
    out: list[dict[str, Any]] = []
    for tenant in Tenant.objects.filter(pk__in=ids):
        m: dict[str, Any] = dict(money.get(tenant.pk, {}))
        p: dict[str, Any] = dict(paid.get(tenant.pk, {}))
        revenue, cost = int(m.get("revenue") or 0), int(m.get("cost") or 0)
        out.append({
            "id": tenant.pk, "slug": tenant.slug, "name": tenant.name, "billing_mode": tenant.billing_mode,
            "balance_micros": balance.get(tenant.pk, 0), "requests": int(m.get("requests") or 0),
            "revenue_micros": revenue, "cost_micros": cost, "margin_micros": revenue - cost,
            "topup_cash_micros": int(p.get("cash") or 0), "topups_failed": int(p.get("failed") or 0),
            "topups_pending": int(p.get("pending") or 0), "meter": meter.get(tenant.pk, none),
        })  # fmt: skip
    out.sort(key=lambda row: (-int(row["revenue_micros"]), str(row["slug"])))
    return out[:limit]


def tenant_meter_failures(*, tenant_id: int, limit: int = 20) -> list[dict[str, Any]]:
    """The tenant's meter events Stripe has not accepted (pending with an error, expired, rejected), newest first."""
    rows = (
        MeterEvent.objects.filter(tenant_id=tenant_id)
        .filter(
            Q(status=MeterStatus.PENDING, last_error__gt="") | Q(status__in=(MeterStatus.EXPIRED, MeterStatus.REJECTED))
        )
        .order_by("-created_at")[:limit]
    )
    return [
        {"identifier": e.identifier, "status": e.status, "attempts": e.attempts, "error": e.last_error,
         "value_micros": e.value, "created_at": e.created_at}
        for e in rows
    ]  # fmt: skip


def tenant_reversals(*, tenant_id: int, limit: int = 20) -> list[dict[str, Any]]:
    rows = PaymentReversal.objects.filter(tenant_id=tenant_id).order_by("-created_at")[:limit]
    return [
        {"stripe_id": r.stripe_id, "kind": r.kind, "status": r.status, "amount_micros": r.amount_micros,
         "created_at": r.created_at}
        for r in rows
    ]  # fmt: skip
