"""Change points of one metric series against its baseline (CUSUM, see stats/cusum.py). Pure functions.

Metrics: ``ttft`` (log of 1k TTFT, upward shifts), ``tps`` (downward shifts),
``availability`` (Bernoulli on "probe found it down"). Baselines come from the
24 h aggregate: for a log-normal latency sigma = (ln p90 - ln p50) / 1.2816, for
throughput sigma = (p50 - p10) / 1.2816, and p0 = 1 - availability.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evaluation.stats import cusum

Z90 = 1.2815515655446004  # standard normal 90% quantile
METRICS = ("ttft", "tps", "availability")
# A series returns to normal after this many consecutive in-baseline samples (closes the incident).
CLOSE_SAMPLES = 4
# In-baseline means z below this (in sigmas) in the bad direction.
NORMAL_Z = cusum.K + 1.0


@dataclass(frozen=True, slots=True)
class Baseline:
    mu: float
    sigma: float  # unused for availability
    p0: float = 0.0


def baseline_from_metrics(metric: str, metrics: dict[str, Any]) -> Baseline | None:
    def value(name: str) -> float | None:
        item = metrics.get(name)
        return float(item["value"]) if item else None

    if metric == "ttft":
        p50, p90 = value("ttft_p50"), value("ttft_p90")
        if not p50 or not p90:
            return None
        return Baseline(math.log(p50), max(0.0, math.log(p90) - math.log(p50)) / Z90)
    if metric == "tps":
        p50, p10 = value("tps"), value("tps_p10")
        return None if not p50 or p10 is None else Baseline(p50, max(0.0, p50 - p10) / Z90)
    available = value("availability")
    return None if available is None else Baseline(0.0, 0.0, p0=1.0 - available)


def baseline_of_incident(metric: str, recorded: float, details: dict[str, Any]) -> Baseline:
    """The baseline an incident was opened against: it is closed against that, not the current 24 h
    aggregate, which a young offering's slow samples may have absorbed (it would close while still slow)."""
    if metric == "availability":
        return Baseline(0.0, 0.0, p0=recorded)
    return Baseline(recorded, float(details.get("sigma") or 0.0))


def transform(metric: str, raw: float | bool) -> float:
    return math.log(max(float(raw), 1e-3)) if metric == "ttft" else float(raw)


def detect(metric: str, samples: Sequence[float], baseline: Baseline) -> cusum.Alarm | None:
    if metric == "availability":
        return cusum.bernoulli([bool(s) for s in samples], p0=baseline.p0)
    direction = 1 if metric == "ttft" else -1
    return cusum.gaussian(
        [transform(metric, s) for s in samples], mu=baseline.mu, sigma=baseline.sigma, direction=direction
    )


def back_to_normal(metric: str, samples: Sequence[float], baseline: Baseline) -> bool:
    tail = samples[-CLOSE_SAMPLES:]
    if len(tail) < CLOSE_SAMPLES:
        return False
    if metric == "availability":
        return not any(tail)
    direction = 1 if metric == "ttft" else -1
    sigma = max(baseline.sigma, abs(baseline.mu) * cusum.SIGMA_FLOOR_SHARE, 1e-9)
    return all(direction * (transform(metric, s) - baseline.mu) / sigma < NORMAL_Z for s in tail)
