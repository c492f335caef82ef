"""Means and ratios at small n: a real interval that contains the mean, never zero-width; "needs more data"
below the minimum n; an honest simulated offering's price-truth ratios are 1.0 within their interval."""

from __future__ import annotations

import asyncio
import datetime as dt
import math
import random
import statistics

import pytest
from django.utils import timezone
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.probes.outcome import Outcome
from evaluation.rules.from_rows import evaluate_rows
from evaluation.runner import Job, run_jobs
from evaluation.services.aggregate import aggregates_refresh
from evaluation.services.results import probe_results_save
from evaluation.services.snapshot import build_snapshot, snapshot_publish
from evaluation.stats.means import mean_ci, t975
from tests.evaluation.conftest import find

COUNTED = 1_000  # our count of a price probe's input tokens


def _price_row(reported_input: int, reported_cost: int) -> Outcome:
    details = {"counted_input": COUNTED, "reported_input": reported_input}
    details |= {"expected_cost": 1_000, "reported_cost": reported_cost, "token_overcount": False}
    return Outcome("price", "reported_vs_counted", 0.0, input_tokens=reported_input, details=details)


def _cache_row(input_tokens: int, cached: int) -> Outcome:
    return Outcome("cache", "plain", 0.0, input_tokens=input_tokens, cached_tokens=cached)


def _not_all_equal(values: list[int]) -> bool:
    return len(set(values)) > 1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=5_000), min_size=2, max_size=40).filter(_not_all_equal))
def test_a_mean_of_differing_ratios_has_a_positive_width_interval_around_the_sample_mean(reported):
    figure = evaluate_rows([_price_row(r, r) for r in reported], None).metrics["overcount_factor"]
    mean = statistics.fmean(r / COUNTED for r in reported)
    assert figure["n"] == len(reported) and figure["value"] == pytest.approx(mean, abs=1e-6)
    assert figure["lo"] < figure["hi"]
    assert figure["lo"] <= mean <= figure["hi"]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(min_value=1, max_value=4_000), st.integers(min_value=0, max_value=4_000)),
        min_size=2,
        max_size=30,
    )
)
def test_a_ratio_of_sums_has_a_positive_width_interval_around_it(turns):
    rows = [_cache_row(i, min(c, i)) for i, c in turns]
    figure = evaluate_rows(rows, None).metrics["cache_hit_ratio"]
    ratio = sum(min(c, i) for i, c in turns) / sum(i for i, _ in turns)
    assert figure["value"] == pytest.approx(ratio, abs=1e-6)
    assert figure["lo"] < figure["hi"] and figure["lo"] <= ratio <= figure["hi"]


@pytest.mark.parametrize("n", [1, 2, 4, 30, 1_000])
def test_identical_samples_still_get_an_interval_that_narrows_with_n(n):
    estimate = mean_ci(n, 0.0, 0.0, center=1.0, prior_sd=0.01)
    assert estimate is not None and estimate.value == 1.0
    assert estimate.lo < 1.0 < estimate.hi
    assert estimate.hi - 1.0 < 0.2 / n  # n = 4: 0.007; the prior's weight fades


def test_student_t_quantiles_match_the_table():
    for df, table in ((1, 12.706), (2, 4.303), (4, 2.776), (10, 2.228), (30, 2.042), (120, 1.980)):
        assert t975(df) == pytest.approx(table, abs=1e-3)


def test_the_interval_covers_a_true_mean_about_95_percent_at_n_4():
    rng = random.Random(5)
    covered = 0
    for _ in range(2_000):
        sample = [rng.gauss(1.1, 0.03) for _ in range(4)]
        d = [x - 1.0 for x in sample]
        estimate = mean_ci(4, sum(d), sum(x * x for x in d), center=1.0, prior_sd=0.01)
        assert estimate is not None
        covered += estimate.lo <= 1.1 <= estimate.hi
    assert 0.92 <= covered / 2_000 <= 0.99
    assert math.isfinite(estimate.hi)


def _probe_and_publish(sim, catalog, redis_client, offerings, now):
    by_id = {o.offering_id: o for o in catalog.offerings}
    results = asyncio.run(run_jobs([Job(o.offering_id, "price") for o in offerings], by_id, region="beijing"))
    assert all(outcome.ok for _, outcomes in results for outcome in outcomes)
    probe_results_save(region="beijing", results=results)
    aggregates_refresh(window="1h", prices={o.offering_id: o.prices for o in offerings}, now=now)
    snapshot_publish(client=redis_client, snapshot=build_snapshot())


def _row_of(client, offering):
    body = client.get("/api/v1/leaderboard", {"region": "beijing", "window": "1h"}).json()
    return next(r for r in body["results"] if r["offering_id"] == offering.offering_id)


@pytest.mark.django_db
def test_honest_offering_reads_one_within_its_interval_and_needs_more_data_before_three_probes(
    client, sim, catalog, redis_client
):
    honest, dishonest = find(catalog, "openai", "gpt-4.1-mini"), find(catalog, "bargain-cloud")
    now = timezone.now() + dt.timedelta(minutes=2)  # the probes' minute is inside the window
    for _ in range(2):
        _probe_and_publish(sim, catalog, redis_client, [honest, dishonest], now)
    early = _row_of(client, honest)
    assert early["overcount_factor_status"] == "needs_more_data" and early["overcount_factor_n"] == 2
    assert early["overcount_factor"] is None and early["overcount_factor_ci"] is None
    for _ in range(2):
        _probe_and_publish(sim, catalog, redis_client, [honest, dishonest], now)
    row, cheat = _row_of(client, honest), _row_of(client, dishonest)
    for metric in ("overcount_factor", "billed_ratio"):
        lo, hi = row[f"{metric}_ci"]
        assert row[f"{metric}_status"] == "ok" and row[f"{metric}_n"] == 4
        assert row[metric] == pytest.approx(1.0) and lo < 1.0 < hi and hi - lo < 0.02, (metric, row[f"{metric}_ci"])
    # the reseller's configured dishonesty (sim/profiles.yaml): 15% more tokens, billed 30% above its prices
    for metric, truth in (("overcount_factor", 1.15), ("billed_ratio", 1.3)):
        lo, hi = cheat[f"{metric}_ci"]
        assert 1.0 < lo <= truth * 1.005 and hi >= truth, (metric, cheat[f"{metric}_ci"])
