"""One-sided CUSUM change-point detection (Page, 1954) on standardised samples.

Gaussian form, for latency (on log scale) and throughput:
    z_t = direction * (x_t - mu) / sigma;   S_t = max(0, S_{t-1} + z_t - K);   alarm when S_t > H.
With K = 0.5 and H = 8 (in sigmas) the in-control average run length is ~19,000
samples (we watch thousands of series), and a 2-sigma shift is caught after ~6 samples,
a 3-sigma one after ~4.

Bernoulli form, for availability (x_t = 1 when the probe found the offering down):
    S_t = max(0, S_t-1 + x_t*ln(p1/p0) + (1-x_t)*ln((1-p1)/(1-p0))),  alarm when S_t > H_BERNOULLI,
with p0 the baseline down-rate (at least P0_FLOOR) and p1 = max(P1_FACTOR * p0, p0 + P1_MIN_SHIFT).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

K = 0.5  # allowance: half the smallest shift (1 sigma) worth an incident
H = 8.0  # decision interval in sigmas: in-control run length ~19,000 samples (thousands of series)
H_BERNOULLI = 4.0  # log-likelihood units; two or three consecutive failures on a healthy offering
P0_FLOOR = 0.01  # a perfect baseline still allows 1% failures, so one blip is not an incident
P1_FACTOR = 5.0
P1_MIN_SHIFT = 0.25
SIGMA_FLOOR_SHARE = 0.05  # sigma never below 5% of |mu|: a too-quiet baseline must not flag jitter


@dataclass(frozen=True, slots=True)
class Alarm:
    index: int  # position in the series where S first crossed H
    statistic: float
    in_alarm_at_end: bool  # S still above H at the last sample


def _floor_sigma(mu: float, sigma: float) -> float:
    return max(sigma, abs(mu) * SIGMA_FLOOR_SHARE, 1e-9)


def gaussian(values: Sequence[float], *, mu: float, sigma: float, direction: int) -> Alarm | None:
    """direction=+1 detects increases (latency), -1 decreases (throughput)."""
    sigma = _floor_sigma(mu, sigma)
    s, first = 0.0, None
    for index, value in enumerate(values):
        s = max(0.0, s + direction * (value - mu) / sigma - K)
        if s > H and first is None:
            first = index
    return None if first is None else Alarm(first, s, s > H)


def bernoulli(down: Sequence[bool], *, p0: float) -> Alarm | None:
    p0 = min(max(p0, P0_FLOOR), 0.5)
    p1 = min(max(P1_FACTOR * p0, p0 + P1_MIN_SHIFT), 0.99)
    up_step, down_step = math.log((1 - p1) / (1 - p0)), math.log(p1 / p0)
    s, first = 0.0, None
    for index, failed in enumerate(down):
        s = max(0.0, s + (down_step if failed else up_step))
        if s > H_BERNOULLI and first is None:
            first = index
    return None if first is None else Alarm(first, s, s > H_BERNOULLI)
