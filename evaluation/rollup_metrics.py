"""Metrics with 95% CIs and flags from merged rollup counters. Pure functions.

A rollup row holds additive counters per probe kind (``evaluation/services/rollup.py`` builds them in
SQL; ``row_counts`` here is the same mapping for one raw row, used to check it). Any window is the
sum of its rollups, so every figure below is a function of sums:

- performance: ``n`` probes, ``down`` (timeout, connect, 5xx, truncated), ``err`` (any error class),
  histograms ``t1:<bucket>`` (TTFT of 1k probes), ``t10:<bucket>`` (10k), ``tps:<bucket>``,
  ``a1:<bucket>`` (first answer token of 1k probes);
- cache: per variant ``<v>.k`` reading turns, ``<v>.i`` / ``<v>.c`` input / cached tokens and the
  sums of squares and products ``<v>.ii``, ``<v>.cc``, ``<v>.ic`` for the ratio's interval;
- price: ``chk`` checked probes, ``ovc`` / ``mis`` flagged, histograms ``ocf:`` (reported / counted
  input) and ``bil:`` (billed / expected cost);
- quality: ``cor`` / ``tot`` canaries; capability: ``fail`` declared capabilities refused.
The cache ratio's interval is the delta-method (ratio estimator) one, which needs only these sums.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from contracts.usage import Prices
from evaluation.metrics import (
    BREAK_SHARE,
    DISHONEST_SHARE,
    MIN_PLAIN_HIT,
    QUALITY_FLOOR,
    Computed,
)
from evaluation.models import ProbeKind
from evaluation.probes.availability import DOWN_CLASSES
from evaluation.stats.estimate import Z95, Estimate
from evaluation.stats.proportions import wilson
from evaluation.stats.sketch import Histogram, bucket

Counts = Mapping[str, float]  # one kind's counters
KindCounts = Mapping[str, Counts]  # kind -> counters
CACHE_VARIANTS = ("plain", "billing", "stripped")
HISTOGRAMS = ("t1", "t10", "tps", "ocf", "bil", "a1")


def histogram(counts: Counts, name: str) -> Histogram:
    prefix = f"{name}:"
    return Histogram({int(k[len(prefix) :]): int(v) for k, v in counts.items() if k.startswith(prefix)})


def _put(out: dict[str, dict[str, Any]], name: str, estimate: Estimate | None) -> None:
    if estimate is not None:
        out[name] = estimate.as_dict()


def ratio_estimate(counts: Counts, variant: str) -> Estimate | None:
    """Ratio of sums C/I over k turns; 95% CI from the linearised variance sum((c - R i)^2) / (k (k-1) mean(i)^2)."""
    k = int(counts.get(f"{variant}.k", 0))
    total_in = counts.get(f"{variant}.i", 0.0)
    if k == 0 or total_in <= 0:
        return None
    ratio = counts.get(f"{variant}.c", 0.0) / total_in
    if k < 2:
        return Estimate(ratio, 0.0, 1.0, k)
    residual = counts[f"{variant}.cc"] - 2 * ratio * counts[f"{variant}.ic"] + ratio * ratio * counts[f"{variant}.ii"]
    se = math.sqrt(max(residual, 0.0) / (k * (k - 1))) / (total_in / k)
    return Estimate(ratio, max(0.0, ratio - Z95 * se), min(1.0, ratio + Z95 * se), k)


def _performance(c: Counts, out: dict[str, dict[str, Any]]) -> None:
    ttft = histogram(c, "t1")
    for name, p in (("ttft_p50", 0.5), ("ttft_p90", 0.9), ("ttft_p99", 0.99)):
        _put(out, name, ttft.quantile_ci(p))
    _put(out, "ttft_10k_p50", histogram(c, "t10").quantile_ci(0.5))
    answer = histogram(c, "a1")
    _put(out, "answer_ttft_p50", answer.quantile_ci(0.5))
    _put(out, "answer_ttft_p90", answer.quantile_ci(0.9))
    tps = histogram(c, "tps")
    _put(out, "tps", tps.quantile_ci(0.5))
    _put(out, "tps_p10", tps.quantile_ci(0.1))
    n = int(c.get("n", 0))
    _put(out, "availability", wilson(n - int(c.get("down", 0)), n))
    _put(out, "error_rate", wilson(int(c.get("err", 0)), n))


def _cache(c: Counts, prices: Prices | None, out: dict[str, dict[str, Any]], flags: list[str]) -> None:
    estimates = {variant: ratio_estimate(c, variant) for variant in CACHE_VARIANTS}
    _put(out, "cache_hit_ratio", estimates["plain"])
    _put(out, "billing_cache_hit_ratio", estimates["billing"])
    _put(out, "stripped_cache_hit_ratio", estimates["stripped"])
    plain, billing = estimates["plain"], estimates["billing"]
    if plain and billing and plain.value >= MIN_PLAIN_HIT and billing.value < BREAK_SHARE * plain.value:
        flags.append("billing_block_breaks_cache")
    if plain and prices is not None:

        def price(h: float) -> float:  # decreasing in the hit ratio: the ratio's CI maps to the price's, swapped
            return prices.input * (1 - h) + prices.cache_read * h

        low, high = sorted((price(plain.lo), price(plain.hi)))
        out["effective_input_price"] = Estimate(price(plain.value), low, high, plain.n).as_dict()


def _honesty(c: Counts, out: dict[str, dict[str, Any]], flags: list[str]) -> None:
    checked = int(c.get("chk", 0))
    for flag, key in (("token_overcount", "ovc"), ("price_mismatch", "mis")):
        hits = int(c.get(key, 0))
        _put(out, f"{flag}_share", wilson(hits, checked))
        if checked and hits / checked >= DISHONEST_SHARE:
            flags.append(flag)
    _put(out, "overcount_factor", histogram(c, "ocf").quantile_ci(0.5))
    _put(out, "billed_ratio", histogram(c, "bil").quantile_ci(0.5))


def _quality(c: Counts, out: dict[str, dict[str, Any]], flags: list[str]) -> None:
    estimate = wilson(int(c.get("cor", 0)), int(c.get("tot", 0)))
    _put(out, "quality_score", estimate)
    if estimate is not None and estimate.hi < QUALITY_FLOOR:
        flags.append("degraded_quality")


def compute_from_counts(counts: KindCounts, prices: Prices | None) -> Computed:
    empty: Counts = {}
    perf = counts.get(ProbeKind.PERFORMANCE, empty)
    result = Computed(n=int(perf.get("n", 0)))
    _performance(perf, result.metrics)
    _cache(counts.get(ProbeKind.CACHE, empty), prices, result.metrics, result.flags)
    _honesty(counts.get(ProbeKind.PRICE, empty), result.metrics, result.flags)
    _quality(counts.get(ProbeKind.QUALITY, empty), result.metrics, result.flags)
    if counts.get(ProbeKind.CAPABILITY, empty).get("fail", 0) > 0:
        result.flags.append("capability_mismatch")
    return result


def _ratio(details: Mapping[str, Any], numerator: str, denominator: str) -> float | None:
    top, bottom = details.get(numerator), details.get(denominator)
    return None if top is None or not bottom else float(top) / float(bottom)


def row_counts(
    kind: str,
    variant: str,
    error_class: str,
    ttft_ms: float | None,
    tps: float | None,
    input_tokens: int | None,
    cached_tokens: int | None,
    details: Mapping[str, Any],
    *,
    answer_ttft_ms: float | None = None,
) -> dict[str, float]:
    """The counters one raw probe row adds to its rollup (the Python twin of the rollup SQL)."""
    out: dict[str, float] = {"n": 1.0}
    if kind == ProbeKind.PERFORMANCE:
        if error_class in DOWN_CLASSES:
            out["down"] = 1.0
        if error_class:
            out["err"] = 1.0
        else:
            if ttft_ms is not None and variant in ("1k", "10k"):
                out[f"{'t1' if variant == '1k' else 't10'}:{bucket(ttft_ms)}"] = 1.0
            if tps is not None:
                out[f"tps:{bucket(tps)}"] = 1.0
            if answer_ttft_ms is not None and variant == "1k":
                out[f"a1:{bucket(answer_ttft_ms)}"] = 1.0
    elif kind == ProbeKind.CACHE and not error_class and input_tokens and variant in CACHE_VARIANTS:
        i, c = float(input_tokens), float(cached_tokens or 0)
        out.update({f"{variant}.k": 1.0, f"{variant}.i": i, f"{variant}.c": c})
        out.update({f"{variant}.ii": i * i, f"{variant}.cc": c * c, f"{variant}.ic": i * c})
    elif kind == ProbeKind.PRICE and not error_class and "token_overcount" in details:
        out["chk"] = 1.0
        if details.get("token_overcount"):
            out["ovc"] = 1.0
        if details.get("price_mismatch"):
            out["mis"] = 1.0
        for name, (top, bottom) in (
            ("ocf", ("reported_input", "counted_input")),
            ("bil", ("reported_cost", "expected_cost")),
        ):
            value = _ratio(details, top, bottom)
            if value is not None:
                out[f"{name}:{bucket(value)}"] = 1.0
    elif kind == ProbeKind.QUALITY and "total" in details:
        out["cor"], out["tot"] = float(int(details["correct"])), float(int(details["total"]))
    elif kind == ProbeKind.CAPABILITY and error_class and error_class not in DOWN_CLASSES:
        out["fail"] = 1.0
    return out
