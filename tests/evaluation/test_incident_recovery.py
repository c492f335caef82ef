"""Incidents close against the baseline they opened on, and on-demand re-probes: an incident's start
and end, or a gateway's breaker, get a fresh performance probe from every region at once."""

from __future__ import annotations

import datetime as dt

import pytest
from celery.contrib.testing.worker import start_worker
from django.test import override_settings
from django.utils import timezone

from contracts.redis_keys import REPROBE_REQUESTS
from evaluation.models import Incident, ProbeResult
from evaluation.services.aggregate import aggregates_refresh
from evaluation.services.incidents import incidents_detect
from evaluation.services.reprobe import reprobe_request, reprobes_dispatch
from evaluation.services.snapshot import build_snapshot
from tests.evaluation.conftest import find
from tests.evaluation.seed import perf_rows, write_rows
from tests.waiting import wait_until
from tokenway.celery import app

NOW = dt.datetime(2026, 1, 5, 12, 0, tzinfo=dt.UTC)
MINUTE = dt.timedelta(minutes=1)


def _probes(oid: int, start: dt.datetime, count: int, ttft: float, seed: int) -> None:
    write_rows(
        perf_rows(
            offering_id=oid,
            region="beijing",
            start=start,
            count=count,
            step=MINUTE,
            ttft_median=ttft,
            tps=60,
            seed=seed,
        )
    )


@pytest.mark.django_db
@pytest.mark.local_servers
def test_a_young_offerings_slowdown_incident_stays_open_until_the_samples_are_back_near_its_baseline(redis_client):
    """The 24 h baseline of an offering measured for half an hour absorbs a slowdown's samples (its p90
    becomes the slow TTFT); judged against it, the incident closed while the offering was still 6x slow."""
    oid, start = 9, NOW - dt.timedelta(minutes=30)
    _probes(oid, start, 24, 500, seed=1)  # 24 minutes at 500 ms
    aggregates_refresh(window="24h", prices={}, now=start + 24 * MINUTE)
    _probes(oid, start + 24 * MINUTE, 6, 3000, seed=2)  # 6x slower from minute 24
    incidents_detect(now=NOW)
    incident = Incident.objects.get(offering_id=oid, region="beijing", metric="ttft", closed_at__isnull=True)
    _probes(oid, NOW, 12, 3000, seed=3)  # still slow for 12 more minutes
    for minute in range(1, 13):  # the 24 h aggregate is refreshed every minute, as beat does
        at = NOW + minute * MINUTE
        aggregates_refresh(window="24h", prices={}, now=at)
        incidents_detect(now=at)
        incident.refresh_from_db()
        assert incident.closed_at is None, f"closed while still slow, minute {minute}"
    assert Incident.objects.get(pk=incident.pk).baseline == pytest.approx(incident.baseline)
    _probes(oid, NOW + 12 * MINUTE + dt.timedelta(seconds=30), 5, 500, seed=4)  # recovered
    incidents_detect(now=NOW + 17 * MINUTE)
    incident.refresh_from_db()
    assert incident.closed_at == NOW + 17 * MINUTE
    # The incident's opening and its close each asked for a fresh probe of the offering.
    assert redis_client.sismember(REPROBE_REQUESTS, str(oid))


@pytest.mark.django_db(transaction=True)
@override_settings(TOKENWAY_REGIONS=["beijing", "shanghai"])
def test_a_requested_reprobe_is_sent_now_to_every_region_once_per_gap(catalog, redis_client):
    assert app.conf.broker_url  # the project's app is Celery's current one: tasks go to the test's Redis
    offering = find(catalog, "openai", "gpt-4.1-mini")
    queues = ("probes.beijing", "probes.shanghai")
    before = [redis_client.llen(q) for q in queues]
    reprobe_request(client=redis_client, offering_ids=[offering.offering_id, 999_999])  # an unknown id is ignored
    assert reprobes_dispatch(client=redis_client) == 2
    assert [redis_client.llen(q) - b for q, b in zip(queues, before, strict=True)] == [1, 1]
    assert not redis_client.scard(REPROBE_REQUESTS)
    reprobe_request(client=redis_client, offering_ids=[offering.offering_id])  # a flapping breaker asks again
    assert reprobes_dispatch(client=redis_client) == 0  # within the gap: no second probe
    assert reprobes_dispatch(client=redis_client) == 0  # nothing requested: one SPOP


@pytest.mark.django_db
@pytest.mark.local_servers
def test_the_snapshot_carries_the_freshest_window_beside_the_hour():

    oid = 11
    _probes(oid, NOW - dt.timedelta(minutes=59), 50, 500, seed=5)  # 50 minutes at 500 ms
    _probes(oid, NOW - dt.timedelta(minutes=9), 10, 2000, seed=6)  # then 10 at 2 s
    for window in ("1h", "15m"):
        aggregates_refresh(window=window, prices={}, now=NOW)
    stats = build_snapshot().stats["beijing"][str(oid)]
    assert stats.n > stats.recent_n == 15 and stats.recent_error_rate == 0.0
    assert stats.ttft_p50_ms < 700 and stats.recent_ttft_p50_ms > 1200  # the hour's median hides the slowdown


@pytest.mark.django_db(transaction=True)
@override_settings(TOKENWAY_REGIONS=["beijing"], TOKENWAY_REGION="beijing")
def test_a_reprobe_runs_on_a_real_worker_and_reaches_the_snapshots_fresh_window(catalog, redis_client):
    """Breaker opened (the gateway's request) -> the re-probe task -> a probe worker probes the simulated
    provider -> the next refresh publishes the offering's freshest window."""
    offering = find(catalog, "openai", "gpt-4.1-mini")
    reprobe_request(client=redis_client, offering_ids=[offering.offering_id])
    assert reprobes_dispatch(client=redis_client) == 1
    with start_worker(app, pool="threads", concurrency=1, queues=["probes.beijing"], perform_ping_check=False):
        wait_until(
            lambda: ProbeResult.objects.filter(offering_id=offering.offering_id, kind="performance").exists(),
            timeout=30,
            message="the re-probe ran",
        )
    # The next refreshes, once the probe's minute is complete (windows end at a whole minute).
    later = timezone.now() + MINUTE
    for window in ("1h", "15m"):
        aggregates_refresh(window=window, prices={}, now=later)
    fresh = build_snapshot().stats["beijing"][str(offering.offering_id)]
    assert fresh.recent_n >= 1 and fresh.recent_error_rate == 0.0 and fresh.recent_ttft_p50_ms
