"""The leaderboard API's honesty: per-metric n and status, min-n nulls, agreeing windows, 400s,
regions side by side, incidents on rows, trends with distinct timestamps (real PostgreSQL and Redis)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from evaluation.models import Incident
from evaluation.selectors.leaderboard import METRICS, MIN_N
from evaluation.services.aggregate import WINDOWS, aggregates_refresh
from evaluation.services.snapshot import build_snapshot, snapshot_publish
from tests.evaluation.conftest import find
from tests.evaluation.seed import perf_rows, write_rows

pytestmark = pytest.mark.django_db


@pytest.fixture
def board(catalog, redis_client):
    """Three offerings: "busy" probed every minute for 3 hours in two regions, "thin" 5 times, "fresh" never."""
    now = timezone.now()
    busy, thin = find(catalog, "openai", "gpt-4.1-mini"), find(catalog, "anthropic", "claude-sonnet-4.5")
    rows = []
    for seed, region in enumerate(("beijing", "shanghai")):
        rows += perf_rows(
            offering_id=busy.offering_id,
            region=region,
            start=now - dt.timedelta(hours=3),
            count=180,
            step=dt.timedelta(minutes=1),
            ttft_median=400 + 300 * seed,
            tps=60,
            seed=seed,
            down_every=30,
        )
    rows += perf_rows(
        offering_id=thin.offering_id,
        region="beijing",
        start=now - dt.timedelta(minutes=10),
        count=5,
        step=dt.timedelta(minutes=1),
        ttft_median=900,
        tps=40,
        seed=9,
    )
    write_rows(rows)
    for window in WINDOWS:
        aggregates_refresh(window=window, prices={}, now=now)
    snapshot_publish(client=redis_client, snapshot=build_snapshot())
    return busy, thin, now


def _rows(client, **params):
    response = client.get("/api/v1/leaderboard", params)
    assert response.status_code == 200, response.content
    return {row["offering_id"]: row for row in response.json()["results"]}


def test_every_metric_has_its_own_n_status_and_interval(client, board):
    busy, _, _ = board
    body = client.get("/api/v1/leaderboard", {"window": "24h"}).json()
    assert body["min_n"] == MIN_N and body["window_end"] and body["window_start"]
    row = {r["offering_id"]: r for r in body["results"]}[busy.offering_id]
    for name in METRICS:
        assert {name, f"{name}_ci", f"{name}_n", f"{name}_status"} <= set(row)
    assert row["availability_n"] == 360 and row["availability_status"] == "ok"
    ok_ttft = 360 - 12  # every 30th probe is down: no TTFT
    assert row["ttft_p50_n"] == ok_ttft and row["ttft_p99_n"] == ok_ttft and row["ttft_p99"] is not None
    lo, hi = row["ttft_p50_ci"]
    assert lo <= row["ttft_p50"] <= hi and hi - lo > 0
    assert row["cache_hit_ratio"] is None and row["cache_hit_ratio_status"] == "no_data"
    assert row["cache_hit_ratio_n"] == 0 and row["cache_hit_ratio_ci"] is None


def test_below_the_minimum_n_a_figure_is_null_with_a_reason(client, board):
    busy, thin, _ = board
    thin_row = _rows(client, window="1h")[thin.offering_id]
    assert thin_row["ttft_p50"] is None and thin_row["ttft_p50_ci"] is None
    assert thin_row["ttft_p50_status"] == "needs_more_data" and thin_row["ttft_p50_n"] == 5
    assert thin_row["availability"] is None and thin_row["availability_n"] == 5
    # 15 minutes of the busy offering in one region: p50 from 15 samples is shown, p90 (30) and p99 (100) are not
    busy_15m = _rows(client, window="15m", region="beijing")[busy.offering_id]
    assert busy_15m["ttft_p50_status"] == "ok" and busy_15m["ttft_p50_n"] == 15 < MIN_N["ttft_p90"]
    assert busy_15m["ttft_p90"] is None and busy_15m["ttft_p90_status"] == "needs_more_data"
    assert busy_15m["ttft_p99"] is None and busy_15m["ttft_p99_status"] == "needs_more_data"


def test_windows_agree_each_metric_n_grows_with_the_window(client, board):
    busy, _, _ = board
    by_window = {w: _rows(client, window=w)[busy.offering_id] for w in WINDOWS}
    ends = {row["window_end"] for row in by_window.values()}
    assert len(ends) == 1  # one refresh: every window ends at the same minute
    for name in METRICS:
        ns = [by_window[w][f"{name}_n"] for w in WINDOWS]
        assert ns == sorted(ns), (name, ns)
    assert by_window["15m"]["availability_n"] == 30 and by_window["1h"]["availability_n"] == 120
    assert by_window["24h"]["availability_n"] == by_window["7d"]["availability_n"] == 360


def test_region_all_carries_each_region_side_by_side(client, board):
    busy, _, _ = board
    row = _rows(client, window="24h")[busy.offering_id]
    assert row["region"] == "all" and set(row["by_region"]) == {"beijing", "shanghai"}
    beijing, shanghai = row["by_region"]["beijing"], row["by_region"]["shanghai"]
    assert beijing["availability_n"] + shanghai["availability_n"] == row["availability_n"]
    assert beijing["ttft_p50_ci"][1] < shanghai["ttft_p50_ci"][0]  # 400 ms vs 700 ms medians
    one = _rows(client, window="24h", region="shanghai")[busy.offering_id]
    assert one["region"] == "shanghai" and "by_region" not in one
    assert one["ttft_p50"] == shanghai["ttft_p50"]


@pytest.mark.parametrize(
    ("params", "param", "code"),
    [
        ({"region": "mars"}, "region", "invalid_choice"),
        ({"window": "5y"}, "window", "invalid_choice"),
        ({"sort": "-nonsense"}, "sort", "invalid_choice"),
        ({"model": "gpt-99"}, "model", "invalid_choice"),
        ({"provider": "nobody"}, "provider", "invalid_choice"),
        ({"regoin": "beijing"}, "regoin", "unknown_parameter"),
        ({"offering": "999999"}, "offering", "invalid_choice"),
    ],
)
def test_unknown_filters_and_values_are_400_in_the_error_shape(client, board, params, param, code):
    for path in ("/api/v1/leaderboard", "/api/v1/leaderboard/trends", "/api/v1/leaderboard/incidents"):
        if path != "/api/v1/leaderboard" and param in ("window", "sort") and path.endswith("incidents"):
            continue
        if (path.endswith("trends") and param == "sort") or (param == "offering" and path.endswith("leaderboard")):
            continue
        response = client.get(path, params)
        assert response.status_code == 400, (path, response.content)
        error = response.json()["error"]
        assert (error["code"], error["param"]) == (code, param) and error["message"]


def test_open_incidents_are_on_rows_and_listed_per_offering(client, board, redis_client):
    busy, thin, now = board
    Incident.objects.create(
        offering_id=busy.offering_id,
        region="shanghai",
        metric="ttft",
        direction="worse",
        opened_at=now - dt.timedelta(minutes=7),
        baseline=6.5,
        observed=7.6,
    )
    Incident.objects.create(
        offering_id=busy.offering_id,
        region="beijing",
        metric="availability",
        direction="worse",
        opened_at=now - dt.timedelta(hours=2),
        closed_at=now - dt.timedelta(hours=1),
        baseline=0.0,
        observed=0.5,
    )
    snapshot_publish(client=redis_client, snapshot=build_snapshot())  # new version: fresh responses
    row = _rows(client, window="1h")[busy.offering_id]
    assert [(i["region"], i["metric"], i["direction"]) for i in row["incidents"]] == [("shanghai", "ttft", "worse")]
    assert _rows(client, window="1h", region="beijing")[busy.offering_id]["incidents"] == []
    assert _rows(client, window="1h")[thin.offering_id]["incidents"] == []
    body = client.get("/api/v1/leaderboard/incidents", {"provider": "openai"}).json()
    assert body["count"] == 1 and body["results"][0]["model"] == "gpt-4.1-mini"
    every = client.get("/api/v1/leaderboard/incidents", {"offering": busy.offering_id, "state": "all"}).json()
    assert [i["metric"] for i in every["results"]] == ["ttft", "availability"]
    assert every["results"][1]["closed_at"] is not None
    assert client.get("/api/v1/leaderboard/incidents", {"model": "claude-sonnet-4.5"}).json()["count"] == 0


def test_trends_are_real_series_with_distinct_increasing_timestamps(client, board):
    busy, thin, _ = board
    body = client.get("/api/v1/leaderboard/trends", {"metric": "ttft_p50", "window": "24h"}).json()
    assert body["bucket_s"] == 3600
    series = {s["offering_id"]: s for s in body["series"]}
    assert set(series) == {busy.offering_id, thin.offering_id}
    points = series[busy.offering_id]["points"]
    times = [p["t"] for p in points]
    assert times == sorted(set(times)) and 3 <= len(times) <= 4  # 3 hours of probes in hourly buckets
    assert sum(p["n"] for p in points) == 360 - 12
    assert all(p["lo"] <= p["value"] <= p["hi"] for p in points)
    hourly = client.get(
        "/api/v1/leaderboard/trends", {"metric": "availability", "window": "1h", "model": "gpt-4.1-mini"}
    )
    only = hourly.json()["series"]
    assert [s["offering_id"] for s in only] == [busy.offering_id] and hourly.json()["bucket_s"] == 300
    five_minute = only[0]["points"]
    assert 12 <= len(five_minute) <= 13 and len({p["t"] for p in five_minute}) == len(five_minute)
    assert sum(p["n"] for p in five_minute) == _rows(client, window="1h")[busy.offering_id]["availability_n"]
    region = client.get(
        "/api/v1/leaderboard/series", {"offering": busy.offering_id, "window": "15m", "region": "beijing"}
    )
    assert [p["n"] for p in region.json()["points"]] == [1] * 15
