"""A tenant's usage grouped by day, model, provider or key, and what prompt caching saved."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import Count, F, Sum
from django.db.models.functions import TruncDay

from metering.models import (
    UsageRecord,
)
from metering.selectors.generations import cache_saved_micros

USAGE_GROUPS = {"day": "day", "model": "model", "provider": "provider", "key": "key_id"}


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


def cache_savings_micros(*, start: datetime, end: datetime, tenant_id: int | None = None) -> int:
    """What cache reads saved: their tokens at the full input price minus at the cache-read price."""
    rows = UsageRecord.objects.filter(finished_at__gte=start, finished_at__lt=end, cache_read__gt=0)
    if tenant_id is not None:
        rows = rows.filter(tenant_id=tenant_id)
    saved = 0
    for record in rows.only("cache_read", "prices", "full_input_price_micros").iterator(chunk_size=2000):
        saved += cache_saved_micros(record)
    return saved
