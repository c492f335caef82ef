"""Operators' billing dashboard data. Prefers metering/evaluation selectors; until they land,
reads their models (read-only)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db.models import Count, Max, Min, Sum
from django.utils import timezone

from catalog.models import Offering
from frontend.data.metering import usage_breakdown
from frontend.data.optional import optional_function, optional_model

LATENCY_SAMPLE = 2000  # recent usage records used for the billing latency percentiles
COVERAGE_WINDOW = timedelta(hours=1)  # performance probes run every 5 min, so an hour shows gaps clearly


def percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def billing_latency_ms() -> dict[str, float | None]:
    """Ingestion lag: request finished -> usage record written (what the tenant waits to see it)."""
    usage = optional_model("metering.models", "UsageRecord")
    if usage is None:
        return {"p50": None, "p99": None}
    pairs = usage.objects.order_by("-id").values_list("finished_at", "created_at")[:LATENCY_SAMPLE]
    lags = [(created - finished).total_seconds() * 1000 for finished, created in pairs if created and finished]
    return {"p50": percentile(lags, 0.5), "p99": percentile(lags, 0.99)}


def top_tenants(days: int = 30, limit: int = 10) -> list[dict[str, Any]]:
    usage = optional_model("metering.models", "UsageRecord")
    if usage is None:
        return []
    since = timezone.now() - timedelta(days=days)
    rows = (
        usage.objects.filter(finished_at__gte=since).values("tenant__slug", "tenant__name")
        .annotate(charge=Sum("charge_micros"), cost=Sum("cost_micros"), requests=Count("id")).order_by("-charge")[:limit]
    )  # fmt: skip
    return [{**row, "margin": (row["charge"] or 0) - (row["cost"] or 0)} for row in rows]


def stripe_sync() -> dict[str, Any]:
    meter = optional_model("metering.models", "MeterEvent")
    events = optional_model("metering.models", "StripeEvent")
    if meter is None:
        return {}
    pending = meter.objects.filter(status="pending")
    oldest = pending.aggregate(oldest=Min("created_at"))["oldest"]
    return {
        "pending": pending.count(),
        "lag_s": (timezone.now() - oldest).total_seconds() if oldest else 0,
        "rejected": meter.objects.filter(status="rejected").count(),
        "expired": meter.objects.filter(status="expired").count(),
        "last_webhook": events.objects.aggregate(at=Max("received_at"))["at"] if events else None,
        "recent_failures": list(
            meter.objects.exclude(last_error="")
            .order_by("-id")
            .values("identifier", "status", "last_error", "attempts")[:10]
        ),
    }


def findings() -> list[Any]:
    finding = optional_model("metering.models", "ReconciliationFinding")
    return list(finding.objects.filter(resolved_at__isnull=True).order_by("-run_at")[:20]) if finding else []


def probe_coverage() -> list[dict[str, Any]]:
    """Per region: offerings probed in the last hour out of active offerings."""
    selector = optional_function("evaluation.selectors", "probe_coverage")
    if selector is not None:
        return list(selector())
    probe = optional_model("evaluation.models", "ProbeResult")
    active = Offering.objects.exclude(status="disabled").count()
    if probe is None:
        return []
    since = timezone.now() - COVERAGE_WINDOW
    rows = (
        probe.objects.filter(started_at__gte=since)
        .values("region")
        .annotate(offerings=Count("offering_id", distinct=True), probes=Count("id"))
    )
    by_region = {row["region"]: row for row in rows}
    from django.conf import settings

    return [
        {"region": r, "offerings": by_region.get(r, {}).get("offerings", 0), "probes": by_region.get(r, {}).get("probes", 0),
         "active": active, "share": (by_region.get(r, {}).get("offerings", 0) / active) if active else None}
        for r in settings.TOKENWAY_REGIONS
    ]  # fmt: skip


def dashboard(days: int = 30) -> dict[str, Any]:
    selector = optional_function("metering.selectors", "billing_dashboard")
    base: dict[str, Any] = dict(selector(days=days)) if selector is not None else {}
    usage = usage_breakdown(tenant_id=None, days=days)
    totals = usage["totals"]
    return {
        "usage": usage,
        "revenue": totals.get("charge", 0),
        "cost": totals.get("cost", 0),
        "margin": (totals.get("charge", 0) or 0) - (totals.get("cost", 0) or 0),
        "savings": totals.get("savings", 0),
        "top_tenants": top_tenants(days),
        "stripe": stripe_sync(),
        "latency": billing_latency_ms(),
        "findings": findings(),
        "coverage": probe_coverage(),
        **base,
    }
