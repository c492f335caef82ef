"""Rollups (minute, hour, day) against raw rows: equal counters, agreeing windows, metrics, speed."""

from __future__ import annotations

import datetime as dt
import itertools
import time

import pytest
from django.db import connection, transaction

from contracts.usage import Prices
from evaluation.models import Aggregate, ProbeResult, ProbeRollup, Resolution
from evaluation.rules.from_counts import evaluate_counts
from evaluation.rules.from_rows import evaluate_rows
from evaluation.services.aggregate import (
    WINDOWS,
    aggregates_refresh,
    cover,
    window_counts,
    window_is_stale,
    window_start,
)
from evaluation.services.rollup import rollups_add, rollups_rebuild
from evaluation.stats.sketch import ALPHA
from tests.evaluation.rollup_seed import mixed_rows, raw_counts

pytestmark = [pytest.mark.django_db, pytest.mark.local_servers]
NOW = dt.datetime(2026, 1, 12, 9, 37, 20, tzinfo=dt.UTC)
END = NOW.replace(second=0)
REGIONS = ["beijing", "shanghai", "frankfurt"]
PRICES = {1: Prices(input=2_000_000, output=8_000_000, cache_read=500_000)}


def _close(a: dict[str, float], b: dict[str, float]) -> bool:
    return set(a) == set(b) and all(abs(a[k] - b[k]) <= 1e-9 * max(1.0, abs(b[k])) for k in a)


def _assert_counts_equal(got, want) -> None:
    assert set(got) == set(want)
    for key, kinds in want.items():
        assert set(got[key]) == set(kinds), key
        for kind, counts in kinds.items():
            assert _close(got[key][kind], counts), (key, kind)


def _write(rows):
    """As probe_results_save does: raw rows and their rollups in one transaction."""
    with transaction.atomic():
        ProbeResult.objects.bulk_create(rows)
        rollups_add(rows)


def _rollup_table():
    return {(r.resolution, r.bucket, r.offering_id, r.region, r.kind): r.counts for r in ProbeRollup.objects.all()}


@pytest.fixture
def week():
    """3,000 mixed rows over 8 days for 3 offerings x 3 regions, rolled up as they are written."""
    rows = mixed_rows(
        offering_ids=[1, 2, 3], regions=REGIONS, start=END - dt.timedelta(days=8), end=END, count=3000, seed=5
    )
    for i in range(0, len(rows), 100):
        _write(rows[i : i + 100])
    return rows


def test_cover_is_an_exact_partition_coarsest_first():
    start = END - WINDOWS["7d"]  # 2026-01-05 09:37
    pieces = cover(start, END)
    assert pieces[0] == (Resolution.MINUTE, start, start.replace(minute=0) + dt.timedelta(hours=1))
    assert pieces[-1] == (Resolution.MINUTE, END.replace(minute=0), END)
    assert all(a[2] == b[1] for a, b in itertools.pairwise(pieces))  # contiguous, no overlap
    assert (Resolution.DAY, dt.datetime(2026, 1, 6, tzinfo=dt.UTC), dt.datetime(2026, 1, 12, tzinfo=dt.UTC)) in pieces
    assert [p[0] for p in pieces] == ["m", "h", "d", "h", "m"]
    assert cover(start, END, coarsest=Resolution.MINUTE) == [(Resolution.MINUTE, start, END)]


def test_rebuild_from_raw_rows_equals_the_rollups_kept_while_writing(week):
    kept = _rollup_table()
    report = rollups_rebuild(END - dt.timedelta(days=9), END)
    assert report.rows["m"] > 2000 and report.rows["h"] > 100 and report.rows["d"] >= 8 * 3
    rebuilt = _rollup_table()
    assert set(rebuilt) == set(kept)
    for key, counts in kept.items():
        assert _close(rebuilt[key], counts), key


def test_minute_rollups_equal_the_counters_of_their_raw_rows(week):
    pieces = [(Resolution.MINUTE, END - dt.timedelta(hours=30), END)]
    _assert_counts_equal(window_counts(pieces), raw_counts(END - dt.timedelta(hours=30), END))


@pytest.mark.parametrize("window", list(WINDOWS))
def test_each_window_from_rollups_equals_the_raw_recompute(week, window):
    start = window_start(window, END)
    pieces = cover(start, END)
    if window == "7d":
        assert start == dt.datetime(2026, 1, 5, 10, tzinfo=dt.UTC)  # the first whole hour after END - 7d
        assert {p[0] for p in pieces} == {Resolution.DAY, Resolution.HOUR, Resolution.MINUTE}
    _assert_counts_equal(window_counts(pieces), raw_counts(start, END))


def test_windows_agree_every_metric_n_grows_with_the_window(week):
    for window in WINDOWS:
        aggregates_refresh(window=window, prices=PRICES, now=NOW)
    checked = 0
    for agg in Aggregate.objects.filter(window="15m"):
        chain = [Aggregate.objects.get(offering_id=agg.offering_id, region=agg.region, window=w) for w in WINDOWS]
        assert [a.n for a in chain] == sorted(a.n for a in chain)
        for name in chain[0].metrics:
            ns = [a.metrics[name]["n"] for a in chain]
            assert ns == sorted(ns), (name, ns)
            checked += 1
    assert checked > 20
    # same n semantics: the 7d "all" row's n is every performance probe in [END - 7d, END)
    all_7d = Aggregate.objects.get(offering_id=1, region="all", window="7d")
    expected = ProbeResult.objects.filter(
        offering_id=1, kind="performance", started_at__gte=window_start("7d", END), started_at__lt=END
    ).count()
    assert all_7d.n == expected > 500


def test_rollup_metrics_match_the_raw_row_statistics(week):
    start = window_start("7d", END)
    counts = window_counts(cover(start, END))[(1, "all")]
    fast = evaluate_counts(counts, PRICES[1])
    rows = ProbeResult.objects.filter(offering_id=1, started_at__gte=start, started_at__lt=END)
    slow = evaluate_rows(rows, PRICES[1])
    assert fast.n == slow.n and sorted(fast.flags) == sorted(slow.flags)
    for name, want in slow.metrics.items():
        got = fast.metrics[name]
        assert got["n"] == want["n"], name
        if name.startswith(
            ("ttft", "answer_ttft", "tps", "overcount", "billed")
        ):  # histogram quantiles: within a bucket
            for part in ("value", "lo", "hi"):
                assert got[part] == pytest.approx(want[part], rel=2 * ALPHA), (name, part)
        elif name in (
            "cache_hit_ratio",
            "billing_cache_hit_ratio",
            "stripped_cache_hit_ratio",
            "effective_input_price",
        ):
            for part in ("value", "lo", "hi"):  # the same ratio of sums and delta-method interval
                assert got[part] == pytest.approx(want[part], rel=1e-9), (name, part)
        else:
            assert got == want, name


def test_a_late_row_lands_in_its_minute_hour_and_day(week):
    late = mixed_rows(
        offering_ids=[2],
        regions=["beijing"],
        start=END - dt.timedelta(hours=30),
        end=END - dt.timedelta(hours=29),
        count=40,
        seed=9,
    )
    _write(late)  # written now, started 29-30 hours ago
    for window in ("24h", "7d"):
        start = window_start(window, END)
        _assert_counts_equal(window_counts(cover(start, END)), raw_counts(start, END))


@pytest.mark.slow
def test_a_week_of_200k_rows_is_answered_from_rollups_fast():
    """200k performance rows over 7 days for 50 offerings x 4 regions, generated in SQL."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {ProbeResult._meta.db_table}
                (offering_id, region, kind, variant, started_at, ttft_ms, tps, error_class, details)
            SELECT 1 + g %% 50, (ARRAY['beijing','shanghai','frankfurt','virginia'])[1 + (g / 50) %% 4],
                   'performance', CASE WHEN g %% 3 = 0 THEN '10k' ELSE '1k' END,
                   %s::timestamptz - (g * interval '3 seconds'), 300 + (g::bigint * 7919) %% 900, 40 + (g::bigint * 104729) %% 60,
                   CASE WHEN g %% 97 = 0 THEN 'server_error' ELSE '' END, '{{}}'::jsonb
            FROM generate_series(1, 200000) AS g
            """,
            [END],
        )
    started = time.perf_counter()
    rollups_rebuild(END - WINDOWS["7d"], END)
    build_s = time.perf_counter() - started
    assert ProbeRollup.objects.filter(resolution=Resolution.DAY).exists()
    timings = {}
    for window in WINDOWS:
        started = time.perf_counter()
        pairs = aggregates_refresh(window=window, prices={}, now=NOW)
        timings[window] = time.perf_counter() - started
        assert pairs == 250
    assert Aggregate.objects.get(offering_id=1, region="all", window="7d").n == 4000
    print(f"rollup build {build_s:.2f}s; aggregates per window (s): {timings}")
    # read from rollups, not 200k raw rows: well under a second on a quiet machine; bounds with room for a busy CI
    assert timings["15m"] < 2.0 and timings["1h"] < 2.0 and timings["7d"] < 6.0


def _aggregates():
    return {(a.offering_id, a.region, a.window): (a.n, a.metrics, sorted(a.flags)) for a in Aggregate.objects.all()}


def test_incremental_refresh_equals_a_full_recompute(week):
    for window in WINDOWS:
        aggregates_refresh(window=window, prices=PRICES, now=NOW)
    steps = [
        (NOW + dt.timedelta(seconds=25), END - dt.timedelta(minutes=1)),  # same end: only rows written since
        (NOW + dt.timedelta(seconds=75), END - dt.timedelta(hours=3)),  # end moves a minute; a late row
        (NOW + dt.timedelta(minutes=9), END + dt.timedelta(minutes=2)),  # several minutes enter and leave
    ]
    for seed, (now, at) in enumerate(steps):
        _write(
            mixed_rows(
                offering_ids=[2],
                regions=["beijing"],
                start=at,
                end=at + dt.timedelta(seconds=50),
                count=6,
                seed=20 + seed,
            )
        )
        recomputed = {w: aggregates_refresh(window=w, prices=PRICES, now=now) for w in WINDOWS}
        incremental = _aggregates()
        full = {w: aggregates_refresh(window=w, prices=PRICES, now=now, full=True) for w in WINDOWS}
        assert _aggregates() == incremental, now
        assert all(recomputed[w] <= full[w] for w in WINDOWS), (recomputed, full)
        if seed == 0:  # nothing entered or left: only the offering just written is recomputed
            for w in WINDOWS:
                assert recomputed[w] == Aggregate.objects.filter(window=w, offering_id=2).count() < full[w]


def test_long_windows_follow_their_own_period_when_one_is_set(week, settings):
    for window in WINDOWS:
        aggregates_refresh(window=window, prices=PRICES, now=NOW)
    later = NOW + dt.timedelta(seconds=30)
    assert all(window_is_stale(w, later) for w in WINDOWS)  # default: every window at every refresh
    settings.TOKENWAY_EVAL_LONG_WINDOW_REFRESH_S = 300
    assert [w for w in WINDOWS if window_is_stale(w, later)] == ["15m", "1h"]
    assert all(window_is_stale(w, NOW + dt.timedelta(seconds=300)) for w in WINDOWS)
