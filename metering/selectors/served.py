"""Tokens served per offering: the popularity the public leaderboard shows (last 24 hours, last 7 days).

Counts every token a usage record carries (input, cache reads and writes, output); rejected calls carry none.
One grouped query over the time-partitioned usage table, so a 7-day read touches at most two partitions.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import Case, F, Sum, Value, When
from django.db.models.functions import Coalesce

from metering.models import UsageRecord

SERVED_WINDOWS = {"24h": timedelta(hours=24), "7d": timedelta(days=7)}


def tokens_served_by_offering(*, now: datetime) -> dict[int, dict[str, int]]:
    """{offering_id: {"24h": tokens, "7d": tokens}} for offerings that served anything in the last 7 days."""
    day_start = now - SERVED_WINDOWS["24h"]
    tokens = F("input_uncached") + F("cache_read") + F("cache_write_5m") + F("cache_write_1h") + F("output")
    rows = (
        UsageRecord.objects.filter(finished_at__gte=now - SERVED_WINDOWS["7d"], finished_at__lt=now)
        .exclude(offering_id__isnull=True)
        .values("offering_id")
        .annotate(
            week=Coalesce(Sum(tokens), Value(0)),
            day=Coalesce(Sum(Case(When(finished_at__gte=day_start, then=tokens), default=Value(0))), Value(0)),
        )
    )
    return {int(r["offering_id"] or 0): {"24h": int(r["day"]), "7d": int(r["week"])} for r in rows}
