"""Aggregates with CIs on seeded rows, change-point incidents, retention."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from contracts.usage import Prices
from evaluation.models import Aggregate, Incident, ProbeResult, ProbeRollup
from evaluation.services.aggregate import aggregates_refresh
from evaluation.services.incidents import incidents_detect
from evaluation.services.retention import probe_results_prune
from tests.evaluation.seed import perf_rows, write_rows

pytestmark = [pytest.mark.django_db, pytest.mark.local_servers]
NOW = dt.datetime(2026, 1, 5, 12, 0, tzinfo=dt.UTC)


def _seed_two_regions():
    step = dt.timedelta(seconds=30)
    rows = perf_rows(
        offering_id=1,
        region="beijing",
        start=NOW - dt.timedelta(minutes=50),
        count=100,
        step=step,
        ttft_median=500,
        tps=80,
        seed=1,
        down_every=20,
    )
    rows += perf_rows(
        offering_id=1,
        region="shanghai",
        start=NOW - dt.timedelta(minutes=50),
        count=100,
        step=step,
        ttft_median=900,
        tps=40,
        seed=2,
    )
    write_rows(rows)


def test_aggregates_per_region_and_all_with_confidence_intervals():
    _seed_two_regions()
    assert aggregates_refresh(window="1h", prices={1: Prices(input=1_000_000, output=2_000_000)}, now=NOW) == 3
    beijing = Aggregate.objects.get(offering_id=1, region="beijing", window="1h")
    shanghai = Aggregate.objects.get(offering_id=1, region="shanghai", window="1h")
    both = Aggregate.objects.get(offering_id=1, region="all", window="1h")
    assert (beijing.n, shanghai.n, both.n) == (100, 100, 200)
    ttft = beijing.metrics["ttft_p50"]
    assert ttft["lo"] < 500 < ttft["hi"] and ttft["hi"] - ttft["lo"] < 150
    assert shanghai.metrics["ttft_p50"]["lo"] > beijing.metrics["ttft_p50"]["hi"]  # clearly different regions
    assert beijing.metrics["availability"]["value"] == pytest.approx(0.95)
    assert beijing.metrics["availability"]["lo"] < 0.95 < beijing.metrics["availability"]["hi"]
    assert shanghai.metrics["availability"]["value"] == 1.0
    assert 78 < beijing.metrics["tps"]["value"] < 82
    for name in ("ttft_p90", "ttft_p99", "error_rate"):
        assert beijing.metrics[name]["lo"] <= beijing.metrics[name]["value"] <= beijing.metrics[name]["hi"]


def test_refresh_replaces_rows_that_left_the_window():
    _seed_two_regions()
    aggregates_refresh(window="1h", prices={}, now=NOW)
    aggregates_refresh(window="1h", prices={}, now=NOW + dt.timedelta(hours=2))
    assert not Aggregate.objects.filter(window="1h").exists()


def test_injected_latency_incident_is_opened_then_closed():
    start = NOW - dt.timedelta(hours=6)
    write_rows(
        perf_rows(
            offering_id=7,
            region="beijing",
            start=start,
            count=330,
            step=dt.timedelta(minutes=1),
            ttft_median=600,
            tps=60,
            seed=3,
        )
    )
    aggregates_refresh(window="24h", prices={}, now=NOW - dt.timedelta(minutes=29))
    # incident: TTFT x3 for the last 8 minutes (one probe a minute)
    write_rows(
        perf_rows(
            offering_id=7,
            region="beijing",
            start=NOW - dt.timedelta(minutes=8),
            count=8,
            step=dt.timedelta(minutes=1),
            ttft_median=1800,
            tps=60,
            seed=4,
        )
    )
    opened, _ = incidents_detect(now=NOW)
    assert opened >= 1
    incident = Incident.objects.get(offering_id=7, region="beijing", metric="ttft", closed_at__isnull=True)
    assert (
        NOW - dt.timedelta(minutes=8) <= incident.opened_at <= NOW - dt.timedelta(minutes=3)
    )  # found within ~5 probes
    assert not Incident.objects.filter(offering_id=7, metric="tps").exists()
    assert incidents_detect(now=NOW) == (0, 0)  # idempotent: still one open incident
    write_rows(
        perf_rows(
            offering_id=7,
            region="beijing",
            start=NOW + dt.timedelta(seconds=30),
            count=6,
            step=dt.timedelta(minutes=1),
            ttft_median=600,
            tps=60,
            seed=5,
        )
    )
    _, closed = incidents_detect(now=NOW + dt.timedelta(minutes=7))
    assert closed >= 1
    incident.refresh_from_db()
    assert incident.closed_at is not None


def test_quiet_series_opens_no_incident():
    start = NOW - dt.timedelta(hours=6)
    write_rows(
        perf_rows(
            offering_id=8,
            region="beijing",
            start=start,
            count=360,
            step=dt.timedelta(minutes=1),
            ttft_median=600,
            tps=60,
            seed=6,
        )
    )
    aggregates_refresh(window="24h", prices={}, now=NOW)
    assert incidents_detect(now=NOW) == (0, 0)


def test_retention_deletes_raw_rows_after_8_days_and_minute_rollups_after_2():
    now = timezone.now()
    old = perf_rows(
        offering_id=1,
        region="beijing",
        start=now - dt.timedelta(days=12),
        count=72,
        step=dt.timedelta(hours=4),
        ttft_median=500,
        tps=50,
        seed=1,
    )
    write_rows(old)
    horizon = now - dt.timedelta(days=8)
    recent_count = ProbeResult.objects.filter(started_at__gte=horizon).count()
    minutes_horizon = now - dt.timedelta(days=2)
    old_minutes = ProbeRollup.objects.filter(resolution="m", bucket__lt=minutes_horizon).count()
    days_before = ProbeRollup.objects.filter(resolution="d").count()
    assert 0 < recent_count < 72 and old_minutes > 0
    deleted = probe_results_prune(now=now)
    assert deleted == 72 - recent_count
    assert not ProbeResult.objects.filter(started_at__lt=horizon).exists()
    assert not ProbeRollup.objects.filter(resolution="m", bucket__lt=minutes_horizon).exists()
    # one probe per minute row; the boundary minute may start just before the horizon
    recent_minutes = ProbeResult.objects.filter(started_at__gte=minutes_horizon).count()
    assert recent_minutes > 5
    assert recent_minutes - 1 <= ProbeRollup.objects.filter(resolution="m").count() <= recent_minutes
    assert ProbeRollup.objects.filter(resolution="d").count() == days_before  # history outlives raw rows
