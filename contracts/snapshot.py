"""Routing snapshots in Redis: the catalog (platform) and the statistics (evaluation).

Both are versioned JSON documents swapped atomically (``SET`` of the document and
``INCR`` of its version in one MULTI); the gateway keeps the latest in memory.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import orjson

from contracts.usage import Prices

SNAPSHOT_VERSION = 1


@dataclass(frozen=True, slots=True)
class OfferingSnapshot:
    offering_id: int
    model: str  # public model slug the caller names
    provider: str  # provider slug
    upstream_model: str  # the name the provider expects
    dialect: str  # "openai" | "anthropic"
    base_url: str  # e.g. http://127.0.0.1:8100/deepseek/v1
    usage_dialect: str  # "openai" | "deepseek" | "moonshot" | "zhipu" | "qwen" | "anthropic"
    cached_tokens_in_input: bool  # True: provider's input count includes cache reads (OpenAI style)
    prices: Prices
    context_window: int
    max_output: int
    parameters: tuple[str, ...] = ()  # "tools", "json_mode", "reasoning", "vision", ...
    rpm: int | None = None
    tpm: int | None = None
    status: str = "active"  # "active" | "degraded" | "disabled"
    keeps_billing_block: bool = False  # first-party Anthropic keeps the Claude Code billing block
    cache_policy: str = "normalized"  # "normalized" | "raw_prefix" | "none"
    cache_ttl_s: int = 300
    quality: float = 0.5  # 0..1, model-level quality prior for the quality mode
    api_key_env: str = ""  # env var holding the platform's key for this provider
    # Added within schema 1 (older documents lack it: 0). Reasoning tokens the model may spend beyond the
    # caller's max_tokens (DeepSeek's reasoner: up to 32K); 0 = the caller's cap bounds reasoning too.
    # The hold prices it (contracts.holds.output_allowance).
    max_reasoning_tokens: int = 0
    # Added within schema 1 (older documents lack it: False). True while the offering's integrity probes
    # (price truth, token count, quality canary) have not run since it was added or its price changed:
    # the gateway does not route to it unless it is all the model has (docs/routing.md).
    integrity_pending: bool = False


@dataclass(frozen=True, slots=True)
class ModelSnapshot:
    """Model-level facts for name resolution (contracts.model_names); the order of
    ``CatalogSnapshot.models`` is the catalog's and breaks version ties (later is newer)."""

    slug: str
    author: str = ""  # e.g. "anthropic": ``anthropic/claude-sonnet-4.5`` resolves
    aliases: tuple[str, ...] = ()  # explicit, from the catalog file


@dataclass(frozen=True, slots=True)
class CatalogSnapshot:
    version: int
    generated_at: float
    offerings: tuple[OfferingSnapshot, ...]
    schema: int = SNAPSHOT_VERSION
    models: tuple[ModelSnapshot, ...] = ()  # added within schema 1: older documents have none

    def to_json(self) -> bytes:
        return orjson.dumps(asdict(self))

    @classmethod
    def from_json(cls, raw: bytes | str) -> CatalogSnapshot:
        data: dict[str, Any] = orjson.loads(raw)
        if data.get("schema") != SNAPSHOT_VERSION:
            raise ValueError(f"unsupported catalog snapshot schema {data.get('schema')!r}")
        offerings = []
        for item in data["offerings"]:
            item["prices"] = Prices(**item["prices"])
            item["parameters"] = tuple(item["parameters"])
            offerings.append(OfferingSnapshot(**item))
        models = tuple(
            ModelSnapshot(**{**item, "aliases": tuple(item.get("aliases") or ())}) for item in data.get("models") or ()
        )
        return cls(
            version=data["version"], generated_at=data["generated_at"], offerings=tuple(offerings), models=models
        )


@dataclass(frozen=True, slots=True)
class OfferingStats:
    """Evaluation statistics of one offering (all regions, or the gateway's region)."""

    offering_id: int
    n: int
    ttft_p50_ms: float | None = None  # first token of any kind, reasoning included
    ttft_p90_ms: float | None = None
    tps_p50: float | None = None  # output tokens/s while they were produced, reasoning included
    availability: float | None = None  # 0..1
    error_rate: float | None = None
    cache_hit_ratio: float | None = None
    effective_input_price: int | None = None  # micro-units per 1M input tokens with cache
    quality_score: float | None = None  # 0..1 from quality canaries
    flags: tuple[str, ...] = ()  # "billing_block_breaks_cache", "price_mismatch", "degraded_quality", ...
    # Added within schema 1 (older documents lack them; the defaults mean "not measured").
    ttft_p50_hi_ms: float | None = None  # upper bound of the p50's 95% CI
    ttft_10k_p50_ms: float | None = None  # p50 TTFT of ~10k-token inputs: prefill cost per input token
    tps_p10: float | None = None  # a slow-ish answer's output speed
    availability_lo: float | None = None  # lower bound of availability's 95% CI
    error_rate_hi: float | None = None  # upper bound of the error rate's 95% CI
    cache_hit_lo: float | None = None  # lower bound of cache_hit_ratio's 95% CI
    cache_n: int = 0  # cache probe samples behind cache_hit_ratio
    price_n: int = 0  # price-truth probes checked
    overcount_factor: float | None = None  # reported / counted input tokens (1.0 = honest)
    billed_ratio: float | None = None  # reported cost / cost at the published price (1.0 = honest)
    quality_n: int = 0  # canary tasks scored
    quality_lo: float | None = None  # lower bound of quality_score's 95% CI
    incidents: tuple[str, ...] = ()  # metrics with an open incident, e.g. ("ttft", "availability")
    # First answer token (after any reasoning; = ttft_p50_ms for a model that does not reason).
    answer_ttft_p50_ms: float | None = None
    # The freshest window (15 minutes) beside the snapshot's hour: the router weighs it over the older samples.
    recent_n: int = 0
    recent_ttft_p50_ms: float | None = None
    recent_tps_p50: float | None = None
    recent_error_rate: float | None = None


_STATS_FIELDS = frozenset(OfferingStats.__dataclass_fields__)


def _offering_stats(item: dict[str, Any]) -> OfferingStats:
    """Fields a newer evaluation added are ignored, so a gateway may lag evaluation by a release."""
    known = {k: v for k, v in item.items() if k in _STATS_FIELDS}
    return OfferingStats(
        **{**known, "flags": tuple(known.get("flags") or ()), "incidents": tuple(known.get("incidents") or ())}
    )


@dataclass(frozen=True, slots=True)
class StatsSnapshot:
    version: int
    generated_at: float
    window: str  # e.g. "1h"
    stats: dict[str, dict[str, OfferingStats]] = field(
        default_factory=dict
    )  # region ("all" too) -> offering id -> stats
    schema: int = SNAPSHOT_VERSION

    def to_json(self) -> bytes:
        return orjson.dumps(asdict(self))

    @classmethod
    def from_json(cls, raw: bytes | str) -> StatsSnapshot:
        data: dict[str, Any] = orjson.loads(raw)
        if data.get("schema") != SNAPSHOT_VERSION:
            raise ValueError(f"unsupported stats snapshot schema {data.get('schema')!r}")
        stats = {
            region: {oid: _offering_stats(item) for oid, item in per.items()} for region, per in data["stats"].items()
        }
        return cls(version=data["version"], generated_at=data["generated_at"], window=data["window"], stats=stats)
