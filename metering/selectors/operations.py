"""What operators read: platform totals, ledger and Stripe sync state, billing latency, open findings, cash and each tenant's billing state."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db.models import Count, F, Min, Q, Sum
from django.utils import timezone

from metering.models import (
    AccountKind,
    Balance,
    MeterEvent,
    MeterStatus,
    PaymentReversal,
    ReconciliationFinding,
    ReversalKind,
    TopUp,
    UsageRecord,
)
from metering.selectors.usage import cache_savings_micros
from tenants.models import Tenant


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
        r["tenant_id"]: {
            **{k: r[k] for k in ("pending", "failing", "expired", "rejected", "sent")},
            "lag_seconds": (now - r["oldest"]).total_seconds() if r["oldest"] else 0.0,
        }
        for r in rows
    }


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
