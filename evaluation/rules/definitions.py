"""Every probe metric and flag, defined once (docs/evaluation.md, "Metrics").

Each measure says which probe rows count and what they add; each metric is an estimator over
measures, with its unit and the sample count below which it is withheld. The raw-row evaluation
(``from_rows``), the counters a row adds to its rollups (``from_counts.row_counts``) and the rollup
SQL (``sql``) are all read from these objects. The counter keys are stored in the rollups: renaming
one needs a rollup rebuild.

Minimum sample counts: quantile CIs come from order statistics, and at these n the interval's ranks
stay inside the sample (p90 needs n >= 30 for a finite upper rank ~ n*p + 1.96*sqrt(n*p*(1-p)) + 1 <= n;
p99 is never reported from fewer than 100, and its upper bound stays the sample maximum until n ~ 500).
Proportions use Wilson intervals, which are honest at small n, but a rate from fewer than 20 probes
moves by 5 points with one probe. Means and ratios of sums use t intervals with a weak prior on the
spread (``stats/means.py``), never zero-width, but a price-truth mean from fewer than 3 probes or a
cache ratio from fewer than 5 says little.
"""

from __future__ import annotations

from evaluation.models import ProbeKind
from evaluation.probes.availability import DOWN_CLASSES
from evaluation.probes.outcome import EMBEDDING_VARIANT
from evaluation.rules.expr import (
    Column,
    Detail,
    DetailTrue,
    ErrorIn,
    HasDetail,
    Positive,
    Quotient,
    Succeeded,
    VariantIn,
)
from evaluation.rules.spec import (
    AnyCounted,
    BelowShareOf,
    BlendedInputPrice,
    Count,
    Flag,
    Mean,
    Measure,
    Metric,
    Moments,
    Proportion,
    Quantile,
    RatioOfSums,
    RatioSums,
    Sample,
    Total,
    UpperBelow,
    ValueAtLeast,
)

PERFORMANCE, CACHE, PRICE, QUALITY, CAPABILITY = (
    ProbeKind.PERFORMANCE.value,
    ProbeKind.CACHE.value,
    ProbeKind.PRICE.value,
    ProbeKind.QUALITY.value,
    ProbeKind.CAPABILITY.value,
)
DOWN = ErrorIn(frozenset(str(c) for c in DOWN_CLASSES))  # timeout, connect, 5xx, truncated: not serving
OK = Succeeded()

# Billing block "breaks" the cache when its hit ratio is below this share of the plain one...
BREAK_SHARE = 0.5
# ...and the plain conversation does hit (an offering without caching cannot be broken).
MIN_PLAIN_HIT = 0.3
# Share of price probes that must disagree before an offering is flagged (one odd answer is noise).
DISHONEST_SHARE = 0.5
# Quality is degraded when even the CI's upper bound of the share of correct canaries is below this.
QUALITY_FLOOR = 0.9

# --- measures: what one probe row adds ------------------------------------------------------------

PROBES = {kind: Count(kind, "n") for kind in (PERFORMANCE, CACHE, PRICE, QUALITY, CAPABILITY)}  # every row
# performance (streaming, ~1k and ~10k input)
PERF_DOWN = Count(PERFORMANCE, "down", DOWN)
PERF_FAILED = Count(PERFORMANCE, "err", ~OK)
TTFT_1K = Sample(PERFORMANCE, "t1", Column("ttft_ms"), OK & VariantIn(("1k",)))
TTFT_10K = Sample(PERFORMANCE, "t10", Column("ttft_ms"), OK & VariantIn(("10k",)))
ANSWER_TTFT_1K = Sample(PERFORMANCE, "a1", Column("answer_ttft_ms"), OK & VariantIn(("1k",)))  # after reasoning
OUTPUT_TPS = Sample(PERFORMANCE, "tps", Column("tps"), OK)  # both input sizes, reasoning included
# embedding offerings' performance probes (probes/embedding.py): the time to the whole answer of one batch
EMBEDDING_LATENCY = Sample(PERFORMANCE, "emb", Column("total_ms"), OK & VariantIn((EMBEDDING_VARIANT,)))
# cache: cached / input tokens over the reading turns of each conversation variant
CACHE_READS = {
    variant: RatioSums(
        CACHE,
        variant,
        numerator=Column("cached_tokens", default=0.0),
        denominator=Column("input_tokens"),
        where=OK & VariantIn((variant,)) & Positive(Column("input_tokens")),
    )
    for variant in ("plain", "billing", "stripped")
}
# price: our count of the input and our price of it against what the provider reported
_PRICE_CHECKED = OK & HasDetail("token_overcount")
PRICE_CHECKED = Count(PRICE, "chk", _PRICE_CHECKED)
PRICE_OVERCOUNT = Count(PRICE, "ovc", _PRICE_CHECKED & DetailTrue("token_overcount"))
PRICE_MISMATCH = Count(PRICE, "mis", _PRICE_CHECKED & DetailTrue("price_mismatch"))
# Means of per-probe ratios, not histogram medians: a bucket's representative puts an exact 1.0 at 0.995.
OVERCOUNT_FACTOR = Moments(PRICE, "ocf", Quotient(Detail("reported_input"), Detail("counted_input")), _PRICE_CHECKED)
BILLED_RATIO = Moments(PRICE, "bil", Quotient(Detail("reported_cost"), Detail("expected_cost")), _PRICE_CHECKED)
# quality canaries: correct answers of all asked (a scored probe has "total", failed or not)
CANARIES_CORRECT = Total(QUALITY, "cor", Detail("correct", default=0.0), HasDetail("total"))
CANARIES_ASKED = Total(QUALITY, "tot", Detail("total", default=0.0), HasDetail("total"))
# capability: a declared capability refused (an answer we did not like, not an outage)
CAPABILITY_REFUSED = Count(CAPABILITY, "fail", ~OK & ~DOWN)

MEASURES: tuple[Measure, ...] = (
    *PROBES.values(),
    PERF_DOWN,
    PERF_FAILED,
    TTFT_1K,
    TTFT_10K,
    ANSWER_TTFT_1K,
    OUTPUT_TPS,
    EMBEDDING_LATENCY,
    *CACHE_READS.values(),
    PRICE_CHECKED,
    PRICE_OVERCOUNT,
    PRICE_MISMATCH,
    OVERCOUNT_FACTOR,
    BILLED_RATIO,
    CANARIES_CORRECT,
    CANARIES_ASKED,
    CAPABILITY_REFUSED,
)

# --- metrics: the leaderboard's figures, in its order ---------------------------------------------

# Spread of one probe's ratio assumed before any is seen, worth one probe (evaluation/stats/means.py): a
# conversation's hit ratio moves by a few points with where the provider's cache blocks end; a price
# probe's ratio by its rounding (the cost tolerance is 1%).
CACHE_PRIOR_SD = 0.05
PRICE_PRIOR_SD = 0.01
_PLAIN = RatioOfSums("cache_hit_ratio", CACHE_READS["plain"], min_n=5, prior_sd=CACHE_PRIOR_SD)
METRICS: tuple[Metric, ...] = (
    Quantile("ttft_p50", TTFT_1K, 0.5, unit="ms", min_n=10),
    Quantile("ttft_p90", TTFT_1K, 0.9, unit="ms", min_n=30),
    Quantile("ttft_p99", TTFT_1K, 0.99, unit="ms", min_n=100),
    Quantile("ttft_10k_p50", TTFT_10K, 0.5, unit="ms", min_n=10),
    Quantile("answer_ttft_p50", ANSWER_TTFT_1K, 0.5, unit="ms", min_n=10),
    Quantile("answer_ttft_p90", ANSWER_TTFT_1K, 0.9, unit="ms", min_n=30),
    Quantile("tps", OUTPUT_TPS, 0.5, unit="tokens/s", min_n=10),
    Quantile("tps_p10", OUTPUT_TPS, 0.1, unit="tokens/s", min_n=20),
    Quantile("embedding_latency_p50", EMBEDDING_LATENCY, 0.5, unit="ms", min_n=10),
    Quantile("embedding_latency_p90", EMBEDDING_LATENCY, 0.9, unit="ms", min_n=30),
    # availability: probes that found the offering serving; error_rate: probes with any error class
    Proportion("availability", hits=PERF_DOWN, total=PROBES[PERFORMANCE], complement=True, min_n=20),
    Proportion("error_rate", hits=PERF_FAILED, total=PROBES[PERFORMANCE], min_n=20),
    _PLAIN,
    RatioOfSums("billing_cache_hit_ratio", CACHE_READS["billing"], min_n=5, prior_sd=CACHE_PRIOR_SD),
    RatioOfSums("stripped_cache_hit_ratio", CACHE_READS["stripped"], min_n=5, prior_sd=CACHE_PRIOR_SD),
    BlendedInputPrice("effective_input_price", _PLAIN, min_n=5),
    Proportion("quality_score", hits=CANARIES_CORRECT, total=CANARIES_ASKED, min_n=20),
    Proportion("token_overcount_share", hits=PRICE_OVERCOUNT, total=PRICE_CHECKED, min_n=3),
    Proportion("price_mismatch_share", hits=PRICE_MISMATCH, total=PRICE_CHECKED, min_n=3),
    Mean("overcount_factor", OVERCOUNT_FACTOR, min_n=3, prior_sd=PRICE_PRIOR_SD, unit="reported / counted input"),
    Mean("billed_ratio", BILLED_RATIO, min_n=3, prior_sd=PRICE_PRIOR_SD, unit="reported / expected cost"),
)
METRIC_BY_NAME = {metric.name: metric for metric in METRICS}

FLAGS: tuple[Flag, ...] = (
    BelowShareOf(
        "billing_block_breaks_cache", "billing_cache_hit_ratio", "cache_hit_ratio", BREAK_SHARE, MIN_PLAIN_HIT
    ),
    ValueAtLeast("token_overcount", "token_overcount_share", DISHONEST_SHARE),
    ValueAtLeast("price_mismatch", "price_mismatch_share", DISHONEST_SHARE),
    UpperBelow("degraded_quality", "quality_score", QUALITY_FLOOR),
    AnyCounted("capability_mismatch", CAPABILITY_REFUSED),
)


_BY_KIND = {kind: tuple(m for m in MEASURES if m.kind == kind) for kind in PROBES}


def measures_of(kind: str) -> tuple[Measure, ...]:
    return _BY_KIND.get(kind, ())
