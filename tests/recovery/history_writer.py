"""Runs inside the stack's Django (``manage.py shell``, tests/recovery/history.py): a day of performance
probes written as the probe workers write them (rows and their rollups), so the statistics, the 24-hour
baselines incidents are judged against and the hour the router reads are those of a deployment that has
been up for a day rather than for two minutes."""

from __future__ import annotations

import datetime as dt
import math
import random

import orjson
from django.utils import timezone

from evaluation.models import ProbeResult
from tests.evaluation.seed import write_rows

DAY = dt.timedelta(hours=24)
STEP = dt.timedelta(seconds=300)  # the default performance interval (evaluation/conf.py)
OUTPUT_TOKENS = 256  # a performance probe's max_tokens
JITTER = 0.075  # tokens/s spread per answer: sim/perf.py's jitter x 0.5


def _row(item: dict[str, float], at: dt.datetime, rng: random.Random) -> ProbeResult:
    ttft = rng.lognormvariate(math.log(item["ttft_ms"]), item["sigma"])
    tps = item["tps"] * max(0.2, 1 + JITTER * rng.gauss(0, 1))
    return ProbeResult(
        offering_id=int(item["offering_id"]),
        region=str(item["region"]),
        kind="performance",
        variant="1k",
        started_at=at,
        ttft_ms=ttft,
        answer_ttft_ms=ttft,
        tps=tps,
        total_ms=ttft + OUTPUT_TOKENS / tps * 1000,
        input_tokens=1000,
        output_tokens=OUTPUT_TOKENS,
        error_class="",
        http_status=200,
    )


def write(spec: str) -> int:
    """``spec``: JSON list of {offering_id, region, ttft_ms, sigma, tps}; one probe per STEP over the day
    before now for each. Returns the rows written."""
    now, rng, rows = timezone.now(), random.Random(25), []
    for item in orjson.loads(spec):
        first = now - DAY + STEP * rng.random()
        rows += [_row(item, first + STEP * i, rng) for i in range(int(DAY / STEP))]
    write_rows(rows)
    return len(rows)
