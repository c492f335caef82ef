"""Probe rows of one offering x region x window -> metrics with 95% CIs, and flags. Pure functions.

Headline definitions (docs/evaluation.md):
- ttft_p50/p90/p99: time to first token of any kind, reasoning included, of the ~1k-input
  performance probes (ms); answer_ttft_p50/p90: time to their first answer token;
- tps: median output tokens/s while they were produced (reasoning included), both input sizes
  (evaluation/probes/speed.py);
- availability: share of performance probes that found the offering serving (not timeout,
  connect error, 5xx or truncated stream); error_rate: share with any error class;
- cache_hit_ratio: cached / input tokens over the reading turns of the plain cache probe;
- effective_input_price: input price blended with the cache-read price at that hit ratio.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from contracts.usage import Prices
from evaluation.models import ProbeKind
from evaluation.probes.availability import DOWN_CLASSES
from evaluation.stats.bootstrap import bootstrap
from evaluation.stats.estimate import Estimate
from evaluation.stats.proportions import wilson
from evaluation.stats.quantiles import quantile_ci

# Billing block "breaks" the cache when its hit ratio is below this share of the plain one...
BREAK_SHARE = 0.5
# ...and the plain conversation does hit (an offering without caching cannot be broken).
MIN_PLAIN_HIT = 0.3
# Share of price probes that must disagree before an offering is flagged (one odd answer is noise).
DISHONEST_SHARE = 0.5
# Quality is degraded when even the CI's upper bound of the share of correct canaries is below this.
QUALITY_FLOOR = 0.9


@dataclass(frozen=True, slots=True)
class PerfRow:
    variant: str
    ttft_ms: float | None
    tps: float | None
    error_class: str
    answer_ttft_ms: float | None = None


@dataclass(frozen=True, slots=True)
class DetailRow:
    kind: str
    variant: str
    error_class: str
    input_tokens: int | None
    cached_tokens: int | None
    details: dict[str, Any]


@dataclass(slots=True)
class Computed:
    n: int
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)


def _put(out: dict[str, dict[str, Any]], name: str, estimate: Estimate | None) -> None:
    if estimate is not None:
        out[name] = estimate.as_dict()


def _ratio(rows: Sequence[DetailRow]) -> float:
    total = sum(r.input_tokens or 0 for r in rows)
    return sum(r.cached_tokens or 0 for r in rows) / total if total else 0.0


def _cache_rows(rows: Sequence[DetailRow], variant: str) -> list[DetailRow]:
    return [
        r for r in rows if r.kind == ProbeKind.CACHE and r.variant == variant and not r.error_class and r.input_tokens
    ]


def _performance(perf: Sequence[PerfRow], out: dict[str, dict[str, Any]]) -> None:
    ok = [r for r in perf if not r.error_class]
    ttft = [r.ttft_ms for r in ok if r.variant == "1k" and r.ttft_ms is not None]
    for name, p in (("ttft_p50", 0.5), ("ttft_p90", 0.9), ("ttft_p99", 0.99)):
        _put(out, name, quantile_ci(ttft, p))
    _put(out, "ttft_10k_p50", quantile_ci([r.ttft_ms for r in ok if r.variant == "10k" and r.ttft_ms is not None], 0.5))
    answer = [r.answer_ttft_ms for r in ok if r.variant == "1k" and r.answer_ttft_ms is not None]
    _put(out, "answer_ttft_p50", quantile_ci(answer, 0.5))
    _put(out, "answer_ttft_p90", quantile_ci(answer, 0.9))
    tps = [r.tps for r in ok if r.tps is not None]
    _put(out, "tps", quantile_ci(tps, 0.5))
    _put(out, "tps_p10", quantile_ci(tps, 0.1))
    _put(out, "availability", wilson(sum(1 for r in perf if r.error_class not in DOWN_CLASSES), len(perf)))
    _put(out, "error_rate", wilson(sum(1 for r in perf if r.error_class), len(perf)))


def _cache(rows: Sequence[DetailRow], prices: Prices | None, out: dict[str, dict[str, Any]], flags: list[str]) -> None:
    estimates = {variant: bootstrap(_cache_rows(rows, variant), _ratio) for variant in ("plain", "billing", "stripped")}
    _put(out, "cache_hit_ratio", estimates["plain"])
    _put(out, "billing_cache_hit_ratio", estimates["billing"])
    _put(out, "stripped_cache_hit_ratio", estimates["stripped"])
    plain, billing = estimates["plain"], estimates["billing"]
    if plain and billing and plain.value >= MIN_PLAIN_HIT and billing.value < BREAK_SHARE * plain.value:
        flags.append("billing_block_breaks_cache")
    if plain and prices is not None:
        # Blended price is decreasing in the hit ratio, so the ratio's CI maps to the price's CI (swapped).
        def price(h: float) -> float:
            return prices.input * (1 - h) + prices.cache_read * h

        low, high = sorted((price(plain.lo), price(plain.hi)))
        out["effective_input_price"] = Estimate(price(plain.value), low, high, plain.n).as_dict()


def _honesty(rows: Sequence[DetailRow], out: dict[str, dict[str, Any]], flags: list[str]) -> None:
    checked = [r for r in rows if r.kind == ProbeKind.PRICE and not r.error_class and "token_overcount" in r.details]
    for flag in ("token_overcount", "price_mismatch"):
        hits = sum(1 for r in checked if r.details.get(flag))
        _put(out, f"{flag}_share", wilson(hits, len(checked)))
        if checked and hits / len(checked) >= DISHONEST_SHARE:
            flags.append(flag)
    _put(out, "overcount_factor", _median_of(checked, "reported_input", "counted_input"))
    _put(out, "billed_ratio", _median_of(checked, "reported_cost", "expected_cost"))


def _median_of(rows: Sequence[DetailRow], numerator: str, denominator: str) -> Estimate | None:
    """Median of a per-probe ratio (reported / ours) with its CI; None when no probe had both figures."""
    ratios = [
        float(r.details[numerator]) / float(r.details[denominator])
        for r in rows
        if r.details.get(numerator) is not None and r.details.get(denominator)
    ]
    return quantile_ci(ratios, 0.5)


def _quality(rows: Sequence[DetailRow], out: dict[str, dict[str, Any]], flags: list[str]) -> None:
    scored = [r for r in rows if r.kind == ProbeKind.QUALITY and "total" in r.details]
    correct, total = sum(int(r.details["correct"]) for r in scored), sum(int(r.details["total"]) for r in scored)
    estimate = wilson(correct, total)
    _put(out, "quality_score", estimate)
    if estimate is not None and estimate.hi < QUALITY_FLOOR:
        flags.append("degraded_quality")


def _capability(rows: Sequence[DetailRow], flags: list[str]) -> None:
    checks = [r for r in rows if r.kind == ProbeKind.CAPABILITY]
    failed = {r.variant for r in checks if r.error_class and r.error_class not in DOWN_CLASSES}
    if failed:
        flags.append("capability_mismatch")


def compute(perf: Sequence[PerfRow], other: Sequence[DetailRow], prices: Prices | None) -> Computed:
    result = Computed(n=len(perf))
    _performance(perf, result.metrics)
    _cache(other, prices, result.metrics, result.flags)
    _honesty(other, result.metrics, result.flags)
    _quality(other, result.metrics, result.flags)
    _capability(other, result.flags)
    return result
