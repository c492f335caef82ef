"""Seeded probe rows for aggregate, incident and API tests."""

from __future__ import annotations

import datetime as dt
import math
import random

from django.db import transaction

from evaluation.models import ProbeResult
from evaluation.services.rollup import rollups_add


def write_rows(rows: list[ProbeResult]) -> None:
    """Insert rows as probe_results_save does: raw rows and their rollups in one transaction."""
    with transaction.atomic():
        ProbeResult.objects.bulk_create(rows)
        rollups_add(rows)


def perf_rows(
    *,
    offering_id: int,
    region: str,
    start: dt.datetime,
    count: int,
    step: dt.timedelta,
    ttft_median: float,
    tps: float,
    seed: int,
    down_every: int = 0,
) -> list[ProbeResult]:
    rng = random.Random(seed)
    rows = []
    for i in range(count):
        down = bool(down_every) and i % down_every == 0
        rows.append(
            ProbeResult(
                offering_id=offering_id,
                region=region,
                kind="performance",
                variant="1k",
                started_at=start + step * i,
                ttft_ms=None if down else rng.lognormvariate(math.log(ttft_median), 0.3),
                tps=None if down else rng.gauss(tps, tps * 0.05),
                total_ms=2000.0,
                input_tokens=1000,
                output_tokens=100,
                error_class="server_error" if down else "",
                http_status=503 if down else 200,
            )
        )
    return rows
