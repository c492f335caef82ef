"""Leaderboard rows: every catalog offering with its statistics from ``evaluation.selectors``.

Offerings without statistics yet are listed too (their numbers show as "—"), so a fresh
install shows what will be measured.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from catalog.selectors import Offering, OfferingPrice, current_price, offerings_listed
from evaluation.selectors import leaderboard_rows, offering_series

WINDOWS = ("1h", "24h", "7d")
ALL_REGIONS = "all"
# Effective price blends input and output like a typical chat turn: 3 input tokens per output token.
INPUT_SHARE = 0.75


@dataclass(frozen=True)
class Row:
    offering_id: int
    model: str
    model_name: str
    provider: str
    provider_name: str
    region: str
    ttft_p50: float | None = None  # ms
    ttft_p90: float | None = None
    tps: float | None = None  # output tokens per second
    availability: float | None = None  # 0..1
    error_rate: float | None = None  # 0..1
    cache_hit: float | None = None  # 0..1
    price_input: int | None = None  # micro-USD per 1M tokens
    price_output: int | None = None
    price_cache_read: int | None = None
    price_effective: int | None = None  # micro-USD per 1M tokens, blended, with cache hits
    n: int = 0
    ci_low: float | None = None  # TTFT p50 confidence interval, ms
    ci_high: float | None = None
    breaks_cache: bool = False  # the Claude Code billing block breaks this offering's prompt cache
    anomalies: tuple[str, ...] = field(default_factory=tuple)  # "price", "quality", "usage"

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["anomalies"] = list(self.anomalies)
        return data


def effective_price(
    price_in: int | None, price_out: int | None, cache_read: int | None, hit: float | None
) -> int | None:
    if price_in is None or price_out is None:
        return None
    ratio = hit or 0.0
    blended_in = price_in * (1 - ratio) + (cache_read if cache_read else price_in) * ratio
    return round(blended_in * INPUT_SHARE + price_out * (1 - INPUT_SHARE))


ANOMALY_FLAGS = {
    "price_mismatch": "price",
    "token_overcount": "price",
    "degraded_quality": "quality",
    "capability_mismatch": "capability",
}
TREND_OFFERINGS = 8  # lines on the trend chart: more is unreadable and each costs a query


def _stats(window: str, region: str) -> dict[tuple[int, str], Mapping[str, Any]]:
    """evaluation.selectors.leaderboard_rows keyed by (offering id, region)."""
    return {(item["offering_id"], item["region"]): item for item in leaderboard_rows(window=window, region=region)}


def _breaks_cache(offering: Offering, flags: set[str]) -> bool:
    if "billing_block_breaks_cache" in flags:
        return True
    keeps = offering.keeps_billing_block
    return bool(offering.provider.keeps_billing_block if keeps is None else keeps)


def _row(offering: Offering, price: OfferingPrice | None, region: str, stats: Mapping[str, Any]) -> Row:
    flags = set(stats.get("flags") or [])
    ci = stats.get("ttft_p50_ci") or (None, None)
    hit = stats.get("cache_hit_ratio")
    price_in, price_out = (price.input, price.output) if price else (None, None)
    cache_read = price.cache_read if price else None
    return Row(
        offering_id=offering.pk,
        model=offering.model.slug,
        model_name=offering.model.name,
        provider=offering.provider.slug,
        provider_name=offering.provider.name,
        region=region,
        ttft_p50=stats.get("ttft_p50"),
        ttft_p90=stats.get("ttft_p90"),
        tps=stats.get("tps"),
        availability=stats.get("availability"),
        error_rate=stats.get("error_rate"),
        cache_hit=hit,
        price_input=price_in,
        price_output=price_out,
        price_cache_read=cache_read,
        price_effective=effective_price(price_in, price_out, cache_read, hit),
        n=int(stats.get("n") or 0),
        ci_low=ci[0],
        ci_high=ci[1],
        breaks_cache=_breaks_cache(offering, flags),
        anomalies=tuple(sorted({ANOMALY_FLAGS[f] for f in flags if f in ANOMALY_FLAGS})),
    )


def leaderboard(*, window: str = "24h", region: str = ALL_REGIONS) -> list[Row]:
    """Every offering of the catalog (measured or not) with its statistics for the window and region."""
    window = window if window in WINDOWS else "24h"
    region = region or ALL_REGIONS
    stats = _stats(window, region)
    rows = [
        _row(offering, current_price(offering), region, stats.get((offering.pk, region), {}))
        for offering in offerings_listed()
    ]
    return sorted(rows, key=lambda row: (row.model, row.provider))


def matches(row: Row, *, q: str = "", model: str = "", provider: str = "", region: str = "") -> bool:
    if model and row.model != model:
        return False
    if provider and row.provider != provider:
        return False
    if region and region != ALL_REGIONS and row.region != region:
        return False
    haystack = f"{row.model} {row.model_name} {row.provider} {row.provider_name} {row.region}".lower()
    return all(word in haystack for word in q.lower().split())


def trend(*, rows: list[Row], window: str, region: str = ALL_REGIONS) -> dict[str, Any]:
    """TTFT p50 over time for the most-sampled offerings: {"labels": [iso...], "series": [{label, provider, ttft}]}."""
    measured = sorted((r for r in rows if r.n), key=lambda r: -r.n)[:TREND_OFFERINGS]
    if not measured:
        return {"labels": [], "series": []}
    points = {
        row.offering_id: {
            p["t"]: p["value"]
            for p in offering_series(offering_id=row.offering_id, metric="ttft_p50", window=window, region=region)
        }
        for row in measured
    }
    labels = sorted({t for by_time in points.values() for t in by_time})
    series = [
        {
            "label": f"{row.model} · {row.provider}",
            "provider": row.provider,
            "ttft": [points[row.offering_id].get(t) for t in labels],
        }
        for row in measured
        if points[row.offering_id]
    ]
    return {"labels": [t[5:16].replace("T", " ") for t in labels], "series": series}
