"""Console and ops billing data. Prefers ``metering.selectors``; until it offers a function, reads
metering's models directly (read-only). Every function answers "nothing yet" rather than failing."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db.models import Count, F, Sum
from django.db.models.functions import TruncDay
from django.utils import timezone

from frontend.data.optional import optional_function, optional_model

LOG_LIMIT = 50  # request log rows per page: a screenful on a laptop


def _model(name: str) -> Any:
    return optional_model("metering.models", name)


def balance_micros(*, tenant_id: int) -> int | None:
    selector = optional_function("metering.ledger", "tenant_account_balance")
    if selector is None:
        return None
    return int(selector(tenant_id=tenant_id))


def month_spend_micros(*, tenant_id: int) -> int:
    usage = _model("UsageRecord")
    if usage is None:
        return 0
    start = timezone.now().replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    total = usage.objects.filter(tenant_id=tenant_id, finished_at__gte=start).aggregate(s=Sum("charge_micros"))["s"]
    return int(total or 0)


def _usage(tenant_id: int | None, since: datetime) -> Any:
    usage = _model("UsageRecord")
    if usage is None:
        return None
    query = usage.objects.filter(finished_at__gte=since)
    return query.filter(tenant_id=tenant_id) if tenant_id is not None else query


def _savings() -> Any:
    # Savings from cache reads: what they would have cost at the full input price minus what they did cost.
    return Sum("full_input_price_micros")


def usage_breakdown(*, tenant_id: int | None, days: int = 30) -> dict[str, Any]:
    """{"by_day": [...], "by_model": [...], "by_provider": [...], "by_key": [...], "totals": {...}}."""
    query = _usage(tenant_id, timezone.now() - timedelta(days=days))
    if query is None:
        return {"by_day": [], "by_model": [], "by_provider": [], "by_key": [], "totals": {}}
    sums = {
        "requests": Count("id"),
        "charge": Sum("charge_micros"),
        "cost": Sum("cost_micros"),
        "tokens_in": Sum(F("input_uncached") + F("cache_read") + F("cache_write_5m") + F("cache_write_1h")),
        "tokens_out": Sum("output"),
        "cache_read": Sum("cache_read"),
        "full_input": _savings(),
    }

    def group(field: Any, name: str) -> list[dict[str, Any]]:
        rows = query.annotate(**{name: field}).values(name).annotate(**sums).order_by(name)
        return [_with_savings(row) for row in rows]

    by_day = group(TruncDay("finished_at"), "day")
    for row in by_day:
        row["day"] = row["day"].date().isoformat()
    return {
        "by_day": by_day,
        "by_model": group(F("model"), "group"),
        "by_provider": group(F("provider"), "group"),
        "by_key": group(F("key_id"), "group"),
        "totals": _with_savings(query.aggregate(**sums)),
    }


def _with_savings(row: dict[str, Any]) -> dict[str, Any]:
    row = {k: (v or 0) if k != "day" and k != "group" else v for k, v in row.items()}
    row["savings"] = max(0, int(row.get("full_input", 0)))
    return row


def request_log(*, tenant_id: int, limit: int = LOG_LIMIT, before_id: int | None = None) -> list[Any]:
    usage = _model("UsageRecord")
    if usage is None:
        return []
    query = usage.objects.filter(tenant_id=tenant_id)
    if before_id:
        query = query.filter(id__lt=before_id)
    return list(query.order_by("-id")[:limit])


def topups(*, tenant_id: int) -> list[Any]:
    topup = _model("TopUp")
    return list(topup.objects.filter(tenant_id=tenant_id).order_by("-created_at")[:20]) if topup else []


def invoices(*, tenant_id: int) -> list[dict[str, Any]]:
    selector = optional_function("metering.selectors", "tenant_invoices")
    return list(selector(tenant_id=tenant_id)) if selector else []


def spend_alerts(*, tenant_id: int) -> list[Any]:
    alert = _model("SpendAlert")
    return list(alert.objects.filter(tenant_id=tenant_id).order_by("threshold_micros")) if alert else []


def notifications(*, tenant_id: int) -> list[Any]:
    note = _model("Notification")
    return list(note.objects.filter(tenant_id=tenant_id).order_by("-created_at")[:10]) if note else []
