"""How fresh the probes are per region, read when /metrics is scraped: a region whose newest probe
is old has lost its workers (docs/operations.md)."""

from __future__ import annotations

import datetime as dt

from django.db.models import Max
from django.utils import timezone

from evaluation.models import ProbeResult

LOOKBACK = dt.timedelta(days=1)  # bounds the scan (BRIN on started_at); older means "a day or more"


def probe_age_by_region(*, now: dt.datetime | None = None) -> dict[str, float]:
    """{region: seconds since its newest probe started}, for regions probed within the last day."""
    now = now or timezone.now()
    rows = (
        ProbeResult.objects.filter(started_at__gte=now - LOOKBACK)
        .values("region")
        .annotate(newest=Max("started_at"))
        .values_list("region", "newest")
    )
    return {region: max(0.0, (now - newest).total_seconds()) for region, newest in rows}
