"""Statistics on seeded data: quantile CIs cover, Wilson behaves at the edges, CUSUM finds shifts only."""

from __future__ import annotations

import math
import random

from evaluation.stats import cusum
from evaluation.stats.bootstrap import bootstrap
from evaluation.stats.proportions import wilson
from evaluation.stats.quantiles import quantile, quantile_ci


def test_quantile_matches_linear_interpolation():
    assert quantile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    assert quantile([10.0], 0.9) == 10.0


def test_order_statistic_ci_covers_the_true_median_about_95_percent():
    rng = random.Random(11)
    true_median = 700.0  # log-normal(ln 700, 0.4): median 700
    covered = 0
    for _ in range(400):
        sample = [rng.lognormvariate(math.log(true_median), 0.4) for _ in range(60)]
        estimate = quantile_ci(sample, 0.5)
        assert estimate is not None and estimate.lo <= estimate.value <= estimate.hi
        covered += estimate.lo <= true_median <= estimate.hi
    assert 0.92 <= covered / 400 <= 0.995


def test_p99_ci_of_a_small_sample_is_clamped_to_the_sample():
    estimate = quantile_ci([1.0, 2.0, 3.0], 0.99)
    assert estimate is not None and estimate.hi == 3.0 and estimate.lo >= 1.0


def test_wilson_interval_is_sane_at_zero_and_one():
    zero = wilson(0, 20)
    one = wilson(20, 20)
    assert zero is not None and zero.lo == 0.0 and 0.1 < zero.hi < 0.2
    assert one is not None and one.hi == 1.0 and 0.8 < one.lo < 0.9
    assert wilson(0, 0) is None


def test_bootstrap_is_seeded_and_brackets_the_ratio():
    rows = [(100, 80), (100, 90), (100, 85), (100, 70)] * 5
    ratio = lambda items: sum(c for _, c in items) / sum(i for i, _ in items)  # noqa: E731
    first, second = bootstrap(rows, ratio), bootstrap(rows, ratio)
    assert first == second
    assert first is not None and first.lo <= 0.8125 <= first.hi


def test_cusum_stays_quiet_in_control_and_fires_after_a_shift():
    rng = random.Random(5)
    quiet = [rng.gauss(0, 1) for _ in range(300)]
    assert cusum.gaussian(quiet, mu=0, sigma=1, direction=1) is None
    shifted = quiet[:50] + [rng.gauss(2.5, 1) for _ in range(10)]
    alarm = cusum.gaussian(shifted, mu=0, sigma=1, direction=1)
    assert alarm is not None and 50 <= alarm.index <= 55 and alarm.in_alarm_at_end


def test_bernoulli_cusum_needs_more_than_one_failure():
    assert cusum.bernoulli([False] * 30 + [True] + [False] * 10, p0=0.01) is None
    alarm = cusum.bernoulli([False] * 30 + [True, True, True], p0=0.01)
    assert alarm is not None and alarm.index >= 30
