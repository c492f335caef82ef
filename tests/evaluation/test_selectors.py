"""evaluation.selectors per audience on real PostgreSQL and Redis: the leaderboard's rows (wire order,
sorting, filters), trends summed from the rollups, the incident list and what probing cost."""

from __future__ import annotations

import datetime as dt

import pytest

from contracts.usage import Tokens, cost_micros
from evaluation.models import ALL_REGIONS, Aggregate, Incident, ProbeResult
from evaluation.rules.from_rows import evaluate_rows
from evaluation.selectors import (
    METRICS,
    IncidentRow,
    MetricFigure,
    TrendPoint,
    incidents_list,
    leaderboard_rows,
    offering_trends,
    probe_spend,
)
from evaluation.services.aggregate import window_end, window_start
from tests.evaluation.conftest import find
from tests.evaluation.seed import write_rows

pytestmark = [pytest.mark.django_db]
NOW = dt.datetime(2026, 3, 10, 12, 0, 30, tzinfo=dt.UTC)
HEAD = [
    "offering_id",
    "model",
    "provider",
    "region",
    "window",
    "window_start",
    "window_end",
    "n",
    "computed_at",
    "flags",
]


def _aggregate(offering_id: int, region: str, *, ttft: float | None, n: int = 40) -> Aggregate:
    metrics = {"availability": {"value": 0.95, "lo": 0.9, "hi": 0.98, "n": n}}
    if ttft is not None:
        metrics["ttft_p50"] = {"value": ttft, "lo": ttft * 0.9, "hi": ttft * 1.1, "n": n}
    return Aggregate.objects.create(
        offering_id=offering_id, region=region, window="1h", computed_at=NOW, n=n, metrics=metrics, flags=[]
    )


@pytest.fixture
def three(catalog):
    """Three offerings measured in beijing and overall; the third has no TTFT figure."""
    picked = [
        find(catalog, "openai", "gpt-4.1-mini"),
        find(catalog, "openai", "gpt-5"),
        find(catalog, "anthropic", "claude-sonnet-4.5"),
    ]
    for offering, ttft in zip(picked, (300.0, 900.0, None), strict=True):
        for region in ("beijing", ALL_REGIONS):
            _aggregate(offering.offering_id, region, ttft=ttft)
    return picked


def test_a_leaderboard_row_goes_out_in_the_documented_field_order(three):
    row = next(r for r in leaderboard_rows(window="1h") if r.offering_id == three[0].offering_id)
    figures = [f"{name}{suffix}" for name in METRICS for suffix in ("", "_ci", "_n", "_status")]
    assert list(row.as_json()) == [*HEAD, *figures, "incidents", "by_region"]
    assert row.figures["ttft_p50"] == MetricFigure(300.0, (270.0, 330.0), 40, "ok")
    assert row.as_json()["ttft_p50_ci"] == [270.0, 330.0]
    assert row.by_region is not None and row.by_region["beijing"].figures["ttft_p50"].value == 300.0
    regional = leaderboard_rows(window="1h", region="beijing")
    assert {r.region for r in regional} == {"beijing"} and all(r.by_region is None for r in regional)
    assert "by_region" not in regional[0].as_json()


def test_rows_without_the_sorted_metric_come_last_in_both_directions(three):
    fast, slow, unmeasured = (o.offering_id for o in three)
    assert [r.offering_id for r in leaderboard_rows(window="1h", sort="ttft_p50")] == [fast, slow, unmeasured]
    assert [r.offering_id for r in leaderboard_rows(window="1h", sort="-ttft_p50")] == [slow, fast, unmeasured]
    by_model = [r.model for r in leaderboard_rows(window="1h", sort="-model")]
    assert by_model == sorted(by_model, reverse=True)


def test_filters_keep_only_the_asked_provider_and_model(three):
    assert {r.provider for r in leaderboard_rows(window="1h", provider="openai")} == {"openai"}
    only = leaderboard_rows(window="1h", model="gpt-5", region="beijing")
    assert [(r.model, r.region) for r in only] == [("gpt-5", "beijing")]
    assert leaderboard_rows(window="24h") == []  # no aggregates of that window yet


def _cache_row(offering_id: int, at: dt.datetime, inp: int, cached: int) -> ProbeResult:
    return ProbeResult(
        offering_id=offering_id,
        region="beijing",
        kind="cache",
        variant="plain",
        started_at=at,
        input_tokens=inp,
        cached_tokens=cached,
    )


def test_a_cache_trend_sums_each_hours_rollups_and_adds_up_to_the_window(catalog):
    offering = find(catalog, "openai", "gpt-4.1-mini").offering_id
    start = window_start("24h", window_end(NOW))
    rows = [
        _cache_row(offering, start + dt.timedelta(minutes=20 * i + 3), 1000 + 10 * i, 100 * (i % 7)) for i in range(12)
    ]
    rows.append(_cache_row(offering, start - dt.timedelta(minutes=1), 1000, 1000))  # before the window
    write_rows(rows)
    points = offering_trends(metric="cache_hit_ratio", window="24h", offering_ids=[offering], now=NOW)[offering]
    assert all(isinstance(p, TrendPoint) for p in points)
    assert [p.t for p in points] == [(start + dt.timedelta(hours=h)).isoformat() for h in range(4)]
    assert sum(p.n for p in points) == 12
    for hour, point in enumerate(points):  # each bucket: the same ratio of sums as its raw rows
        in_hour = rows[3 * hour : 3 * hour + 3]
        want = evaluate_rows(in_hour, None).metrics["cache_hit_ratio"]
        assert (point.value, point.lo, point.hi, point.n) == (want["value"], want["lo"], want["hi"], want["n"])
    assert offering_trends(metric="ttft_p50", window="24h", offering_ids=[offering], now=NOW) == {offering: []}


def _incident(offering_id: int, region: str, opened: dt.datetime, closed: dt.datetime | None, metric: str) -> Incident:
    return Incident.objects.create(
        offering_id=offering_id,
        region=region,
        metric=metric,
        direction="worse",
        opened_at=opened,
        closed_at=closed,
        baseline=400.0,
        observed=900.0,
    )


def test_incidents_open_or_of_the_last_week_newest_first_per_region():
    old_open = _incident(1, "beijing", NOW - dt.timedelta(days=30), None, "ttft")
    old_closed = _incident(1, "beijing", NOW - dt.timedelta(days=8), NOW - dt.timedelta(days=7), "tps")
    recent_closed = _incident(2, "shanghai", NOW - dt.timedelta(days=2), NOW - dt.timedelta(days=1), "ttft")
    new_open = _incident(2, "beijing", NOW - dt.timedelta(hours=1), None, "availability")
    assert [i.id for i in incidents_list(state="open")] == [new_open.pk, old_open.pk]
    every = incidents_list(state="all", now=NOW)
    assert [i.id for i in every] == [new_open.pk, recent_closed.pk, old_open.pk]
    assert old_closed.pk not in {i.id for i in every}
    assert every[1] == IncidentRow(
        id=recent_closed.pk,
        offering_id=2,
        region="shanghai",
        metric="ttft",
        direction="worse",
        opened_at=(NOW - dt.timedelta(days=2)).isoformat(),
        closed_at=(NOW - dt.timedelta(days=1)).isoformat(),
        baseline=400.0,
        observed=900.0,
    )
    assert [i.id for i in incidents_list(state="all", region="beijing", offering_ids=[2], now=NOW)] == [new_open.pk]


def test_probe_spend_prices_catalog_offerings_inside_the_range_and_counts_the_rest(catalog):
    known = find(catalog, "openai", "gpt-4.1-mini")

    def probe(offering_id: int, region: str, at: dt.datetime) -> ProbeResult:
        return ProbeResult(
            offering_id=offering_id,
            region=region,
            kind="performance",
            variant="1k",
            started_at=at,
            input_tokens=1000,
            cached_tokens=400,
            output_tokens=100,
        )

    since = NOW - dt.timedelta(hours=1)
    ProbeResult.objects.bulk_create(
        [
            probe(known.offering_id, "beijing", since),  # the start counts
            probe(known.offering_id, "shanghai", NOW - dt.timedelta(seconds=1)),
            probe(987_654, "beijing", NOW - dt.timedelta(minutes=5)),  # no longer in the catalog
            probe(known.offering_id, "beijing", NOW),  # the end does not
        ]
    )
    spend = probe_spend(since=since, until=NOW)
    one = cost_micros(Tokens(input_uncached=600, cache_read=400, output=100), known.prices)
    assert one > 0 and spend.probes == 3
    assert spend.per_region == {"beijing": one, "shanghai": one} and spend.micros == 2 * one
