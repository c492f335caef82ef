"""First-byte deadlines from the evaluations' measured TTFT: floor, multiple, prompt size, cap, default."""

from __future__ import annotations

import pytest

from contracts.snapshot import OfferingStats
from routing.failover.deadline import FLOOR_S, NO_STATS_S, first_byte_deadline_s, trial_first_byte_deadline_s


def _stats(p50: float | None = None, p90: float | None = None) -> OfferingStats:
    return OfferingStats(offering_id=1, n=100, ttft_p50_ms=p50, ttft_p90_ms=p90)


@pytest.mark.parametrize(
    ("stats", "expected"),
    [
        (_stats(p50=300, p90=1500), 4.5),  # 3 x p90
        (_stats(p50=100, p90=200), FLOOR_S),  # a fast provider still gets the floor
        (_stats(p50=800), 4.8),  # only the median: 6 x p50
        (_stats(), NO_STATS_S),  # measured nothing yet
        (None, NO_STATS_S),  # never evaluated
    ],
)
def test_deadline_follows_the_measured_ttft(stats, expected):
    assert first_byte_deadline_s(stats, input_tokens=0, cap_s=60) == pytest.approx(expected)


def test_long_prompts_get_time_to_be_read_and_the_cap_bounds_everything():
    assert first_byte_deadline_s(_stats(p90=1000), input_tokens=20_000, cap_s=60) == pytest.approx(13.0)
    assert first_byte_deadline_s(_stats(p90=1000), input_tokens=1_000_000, cap_s=60) == 60
    assert first_byte_deadline_s(None, input_tokens=0, cap_s=1.5) == 1.5


@pytest.mark.parametrize(
    ("stats", "expected"),
    [
        (_stats(p50=1500, p90=6000), 3.0),  # 2 x p50: a slowdown's samples have inflated the p90 (18 s)
        (_stats(p50=800, p90=3000), FLOOR_S),  # never under the floor
        (_stats(p50=1500), 3.0),  # only the median known: 2 x, not the usual 6 x
        (_stats(), NO_STATS_S),  # nothing measured: the usual default
    ],
)
def test_a_half_open_trial_gets_twice_the_median(stats, expected):
    assert trial_first_byte_deadline_s(stats, input_tokens=0, cap_s=60) == pytest.approx(expected)
    assert trial_first_byte_deadline_s(stats, input_tokens=0, cap_s=1.5) == 1.5  # the cap bounds it too
