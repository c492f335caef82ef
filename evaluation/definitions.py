"""What each leaderboard metric means, in one sentence: the API returns it beside the figures
(``definitions`` in GET /api/v1/leaderboard) so pages show the same words; docs/evaluation.md has
the full rules."""

from __future__ import annotations

DEFINITIONS: dict[str, str] = {
    "ttft_p50": "Median time to first token of any kind, reasoning included, at ~1k input tokens (ms).",
    "ttft_p90": "90th percentile of the time to first token, reasoning included, at ~1k input tokens (ms).",
    "ttft_p99": "99th percentile of the time to first token, reasoning included, at ~1k input tokens (ms).",
    "ttft_10k_p50": "Median time to first token, reasoning included, at ~10k input tokens (ms).",
    "answer_ttft_p50": "Median time to the first answer token, after any reasoning, at ~1k input tokens (ms); "
    "equals TTFT for a model that does not reason.",
    "answer_ttft_p90": "90th percentile of the time to the first answer token at ~1k input tokens (ms).",
    "tps": "Median output speed: output tokens (reasoning included) per second over the time they were produced, "
    "after the first token; hidden reasoning is counted from the usage.",
    "tps_p10": "10th percentile of the output speed (a slow answer's tokens per second).",
    "embedding_latency_p50": "Median time to the whole answer of an embedding request of 8 passages, ~1k input "
    "tokens (ms); embedding models only.",
    "embedding_latency_p90": "90th percentile of the time to the whole answer of an embedding request (ms).",
    "availability": "Share of performance probes (embedding probes, for an embedding model) that found the "
    "offering serving (no timeout, connection error, 5xx or cut stream).",
    "error_rate": "Share of performance probes (embedding probes, for an embedding model) with any error.",
    "cache_hit_ratio": "Cached / input tokens over the reading turns of a multi-turn conversation.",
    "billing_cache_hit_ratio": "The cache hit ratio when the first system block carries a changing billing header.",
    "stripped_cache_hit_ratio": "The cache hit ratio of the billing-header conversation after the gateway strips it.",
    "effective_input_price": "Input price per 1M tokens blended with the cache-read price at the cache hit ratio.",
    "quality_score": "Share of checkable canary tasks answered right.",
    "token_overcount_share": "Share of price probes whose reported input tokens exceed our count by more than 10%.",
    "price_mismatch_share": "Share of price probes billed more than 1% off the published price.",
    "overcount_factor": "Mean of reported / counted input tokens over the price probes (1.0 is honest).",
    "billed_ratio": "Mean of billed cost / cost at the published price over the price probes (1.0 is honest).",
}
