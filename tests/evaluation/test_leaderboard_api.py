"""GET /api/v1/leaderboard and /leaderboard/series: public, filtered, sorted, cached, strict about params."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from evaluation.models import ProbeResult, ProbeRollup
from evaluation.services.aggregate import aggregates_refresh
from evaluation.services.snapshot import build_snapshot, snapshot_publish
from tests.evaluation.conftest import find
from tests.evaluation.seed import perf_rows, write_rows

pytestmark = [pytest.mark.django_db, pytest.mark.local_servers]


@pytest.fixture
def board(catalog, redis_client):
    now = timezone.now()
    fast, slow, other = (
        find(catalog, "openai", "gpt-4.1-mini"),
        find(catalog, "openai", "gpt-5"),
        find(catalog, "anthropic", "claude-sonnet-4.5"),
    )
    rows = []
    for seed, (offering, ttft) in enumerate(((fast, 300), (slow, 1500), (other, 800))):
        rows += perf_rows(
            offering_id=offering.offering_id,
            region="beijing",
            start=now - dt.timedelta(minutes=40),
            count=40,
            step=dt.timedelta(minutes=1),
            ttft_median=ttft,
            tps=50 + seed,
            seed=seed,
        )
    write_rows(rows)
    aggregates_refresh(window="1h", prices={}, now=now)
    snapshot_publish(client=redis_client, snapshot=build_snapshot())
    return fast, slow, other


def test_leaderboard_is_public_sorted_by_ttft_by_default(client, board):
    fast, slow, other = board
    response = client.get("/api/v1/leaderboard")
    assert response.status_code == 200
    body = response.json()
    assert [r["offering_id"] for r in body["results"]] == [fast.offering_id, other.offering_id, slow.offering_id]
    row = body["results"][0]
    assert row["model"] == "gpt-4.1-mini" and row["provider"] == "openai" and row["region"] == "all" and row["n"] == 40
    assert row["ttft_p50_ci"][0] <= row["ttft_p50"] <= row["ttft_p50_ci"][1]
    assert {"tps", "availability", "error_rate", "cache_hit_ratio", "effective_input_price", "flags"} <= set(row)


def test_leaderboard_filters_and_descending_sort(client, board):
    fast, slow, other = board
    body = client.get("/api/v1/leaderboard", {"provider": "openai", "sort": "-ttft_p50", "region": "beijing"}).json()
    assert [r["offering_id"] for r in body["results"]] == [slow.offering_id, fast.offering_id]
    body = client.get("/api/v1/leaderboard", {"model": "claude-sonnet-4.5", "window": "1h"}).json()
    assert [r["offering_id"] for r in body["results"]] == [other.offering_id]
    assert client.get("/api/v1/leaderboard", {"window": "7d"}).json()["results"] == []


@pytest.mark.parametrize(
    ("params", "param"),
    [({"window": "2h"}, "window"), ({"sort": "nonsense"}, "sort"), ({"region": "mars"}, "region")],
)
def test_bad_parameters_are_400_in_the_error_shape(client, board, params, param):
    response = client.get("/api/v1/leaderboard", params)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == param and error["code"].startswith("invalid") and error["message"]


@pytest.mark.parametrize("offering", [str(2**63), "99999999999999999999", "0", "-1", "x"])
def test_series_offering_outside_bigint_is_400_not_a_server_error(client, redis_client, offering):
    """Regression: an id beyond PostgreSQL bigint reached the query and failed in the driver (a 500)."""
    response = client.get("/api/v1/leaderboard/series", {"offering": offering})
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "offering"


def test_response_is_cached_until_the_stats_version_changes(client, board, redis_client):
    first = client.get("/api/v1/leaderboard").json()
    ProbeResult.objects.all().delete()
    ProbeRollup.objects.all().delete()
    aggregates_refresh(window="1h", prices={}, now=timezone.now(), full=True)
    assert client.get("/api/v1/leaderboard").json() == first  # same version: served from the cache
    snapshot_publish(client=redis_client, snapshot=build_snapshot())
    assert client.get("/api/v1/leaderboard").json()["results"] == []


def test_series_returns_points_with_intervals(client, board):
    fast, _, _ = board
    response = client.get(
        "/api/v1/leaderboard/series", {"offering": fast.offering_id, "metric": "ttft_p50", "window": "1h"}
    )
    assert response.status_code == 200
    points = response.json()["points"]
    assert 8 <= len(points) <= 13 and all(p["lo"] <= p["value"] <= p["hi"] for p in points)
    bad = client.get("/api/v1/leaderboard/series", {"offering": "x"})
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "offering"
