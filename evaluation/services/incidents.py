"""Open and close Incident records from change points in the recent probe series."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from evaluation.changepoints import (
    METRICS,
    Baseline,
    back_to_normal,
    baseline_from_metrics,
    baseline_of_incident,
    detect,
)
from evaluation.models import ALL_REGIONS, Aggregate, Incident, ProbeKind, ProbeResult
from evaluation.probes.availability import DOWN_CLASSES
from evaluation.services.reprobe import reprobe_request
from foundation.redis_client import get_redis

# Samples examined per run: long enough for CUSUM to accumulate, short enough that old trouble fades.
DETECT_WINDOW = dt.timedelta(minutes=30)
# Baseline statistics need this many probes before we trust them to call anything an incident.
MIN_BASELINE_N = 20

Key = tuple[int, str, str]  # (offering_id, region, metric)
Sample = tuple[dt.datetime, float]


def _series(since: dt.datetime) -> dict[Key, list[Sample]]:
    series: dict[Key, list[Sample]] = defaultdict(list)
    rows = ProbeResult.objects.filter(kind=ProbeKind.PERFORMANCE, started_at__gte=since).order_by("started_at")
    for oid, region, variant, at, ttft, tps, error in rows.values_list(
        "offering_id", "region", "variant", "started_at", "ttft_ms", "tps", "error_class"
    ).iterator(chunk_size=5000):
        for where in (region, ALL_REGIONS):
            series[(oid, where, "availability")].append((at, float(error in DOWN_CLASSES)))
            if not error and variant == "1k" and ttft is not None:
                series[(oid, where, "ttft")].append((at, ttft))
            if not error and tps is not None:
                series[(oid, where, "tps")].append((at, tps))
    return series


def _baselines() -> dict[Key, Baseline]:
    result: dict[Key, Baseline] = {}
    for agg in Aggregate.objects.filter(window="24h", n__gte=MIN_BASELINE_N):
        for metric in METRICS:
            baseline = baseline_from_metrics(metric, agg.metrics)
            if baseline is not None:
                result[(agg.offering_id, agg.region, metric)] = baseline
    return result


def _open_one(key: Key, at: dt.datetime, baseline: Baseline, observed: float, statistic: float) -> bool:
    try:
        with transaction.atomic():  # the partial unique index makes a second open incident impossible
            Incident.objects.create(
                offering_id=key[0],
                region=key[1],
                metric=key[2],
                direction="worse",
                opened_at=at,
                baseline=baseline.p0 if key[2] == "availability" else baseline.mu,
                observed=observed,
                details={"cusum": round(statistic, 3), "sigma": baseline.sigma},
            )
    except IntegrityError:
        return False
    return True


def incidents_detect(*, now: dt.datetime | None = None) -> tuple[int, int]:
    """Returns (opened, closed)."""
    now = now or timezone.now()
    series, baselines = _series(now - DETECT_WINDOW), _baselines()
    open_by_key = {(i.offering_id, i.region, i.metric): i for i in Incident.objects.filter(closed_at__isnull=True)}
    last_closed = {
        (row["offering_id"], row["region"], row["metric"]): row["last"]
        for row in Incident.objects.filter(closed_at__isnull=False)
        .values("offering_id", "region", "metric")
        .annotate(last=Max("closed_at"))
    }
    opened = closed = 0
    changed: set[int] = set()
    for key, samples in series.items():
        after = last_closed.get(key)
        samples = [s for s in samples if after is None or s[0] > after]
        values = [v for _, v in samples]
        incident = open_by_key.get(key)
        if incident is not None:
            if back_to_normal(key[2], values, baseline_of_incident(key[2], incident.baseline, incident.details)):
                incident.closed_at = now
                incident.save(update_fields=["closed_at"])
                closed += 1
                changed.add(key[0])
            continue
        baseline = baselines.get(key)
        if baseline is None:
            continue
        alarm = detect(key[2], values, baseline)
        if alarm is not None and alarm.in_alarm_at_end:
            recent = values[alarm.index :]
            if _open_one(key, samples[alarm.index][0], baseline, sum(recent) / len(recent), alarm.statistic):
                opened += 1
                changed.add(key[0])
    # Fresh samples confirm an incident's start and its end sooner than the schedule would.
    reprobe_request(client=get_redis(), offering_ids=changed)
    return opened, closed
