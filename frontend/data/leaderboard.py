"""Leaderboard rows: one per offering x region, with statistics from evaluation.

Prefers ``evaluation.selectors.leaderboard(window=, region=)``; until that lands, the
rows are the catalog's offerings joined with evaluation's latest ``Aggregate`` rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from catalog.models import Offering, OfferingPrice
from frontend.data.optional import optional_function, optional_model

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


def _metric(metrics: Mapping[str, Any], *names: str) -> tuple[float | None, float | None, float | None]:
    """(value, lo, hi) of the first metric present; metrics are {"value","lo","hi"} dicts or numbers."""
    for name in names:
        found = metrics.get(name)
        if isinstance(found, Mapping):
            return found.get("value"), found.get("lo"), found.get("hi")
        if isinstance(found, int | float):
            return float(found), None, None
    return None, None, None


def _latest_prices(offering_ids: Iterable[int]) -> dict[int, OfferingPrice]:
    latest: dict[int, OfferingPrice] = {}
    for price in OfferingPrice.objects.filter(offering_id__in=list(offering_ids)).order_by("offering_id", "-version"):
        latest.setdefault(price.offering_id, price)
    return latest


def _aggregates(window: str, region: str) -> dict[tuple[int, str], Any]:
    aggregate_model = optional_model("evaluation.models", "Aggregate")
    if aggregate_model is None:
        return {}
    query = aggregate_model.objects.filter(window=window)
    if region != ALL_REGIONS:
        query = query.filter(region=region)
    return {(agg.offering_id, agg.region): agg for agg in query}


def _row(offering: Offering, price: OfferingPrice | None, region: str, agg: Any) -> Row:
    metrics: Mapping[str, Any] = agg.metrics if agg is not None else {}
    flags = set(agg.flags if agg is not None else [])
    ttft, lo, hi = _metric(metrics, "ttft_p50", "ttft_ms_p50", "ttft")
    hit = _metric(metrics, "cache_hit_ratio", "cache_hit")[0]
    price_in = price.input if price else None
    price_out = price.output if price else None
    cache_read = price.cache_read if price else None
    keeps_block = offering.keeps_billing_block if offering.keeps_billing_block is not None else None
    if keeps_block is None:
        keeps_block = offering.provider.keeps_billing_block
    return Row(
        offering_id=offering.pk,
        model=offering.model.slug,
        model_name=offering.model.name,
        provider=offering.provider.slug,
        provider_name=offering.provider.name,
        region=region,
        ttft_p50=ttft,
        ttft_p90=_metric(metrics, "ttft_p90", "ttft_ms_p90")[0],
        tps=_metric(metrics, "tps", "tps_p50", "output_tps")[0],
        availability=_metric(metrics, "availability")[0],
        error_rate=_metric(metrics, "error_rate")[0],
        cache_hit=hit,
        price_input=price_in,
        price_output=price_out,
        price_cache_read=cache_read,
        price_effective=effective_price(price_in, price_out, cache_read, hit),
        n=int(agg.n) if agg is not None else 0,
        ci_low=lo,
        ci_high=hi,
        breaks_cache=bool(keeps_block) or "billing_block_breaks_cache" in flags,
        anomalies=tuple(sorted(flag.removesuffix("_anomaly") for flag in flags if flag.endswith("_anomaly"))),
    )


def _from_catalog(window: str, region: str) -> list[Row]:
    offerings = list(Offering.objects.select_related("model", "provider").exclude(status="disabled"))
    prices = _latest_prices(o.pk for o in offerings)
    aggregates = _aggregates(window, region)
    rows: list[Row] = []
    for offering in offerings:
        regions = sorted(r for (oid, r) in aggregates if oid == offering.pk) or [region]
        rows.extend(_row(offering, prices.get(offering.pk), r, aggregates.get((offering.pk, r))) for r in regions)
    return sorted(rows, key=lambda row: (row.model, row.provider, row.region))


def _from_selector(found: list[Mapping[str, Any]]) -> list[Row]:
    names = set(Row.__dataclass_fields__)
    rows = []
    for item in found:
        data = {key: value for key, value in item.items() if key in names}
        data["anomalies"] = tuple(data.get("anomalies") or ())
        rows.append(Row(**data))
    return rows


def leaderboard(*, window: str = "24h", region: str = ALL_REGIONS) -> list[Row]:
    window = window if window in WINDOWS else "24h"
    selector = optional_function("evaluation.selectors", "leaderboard_rows")
    if selector is not None:
        return _from_selector(selector(window=window, region=region))
    return _from_catalog(window, region)


def matches(row: Row, *, q: str = "", model: str = "", provider: str = "", region: str = "") -> bool:
    if model and row.model != model:
        return False
    if provider and row.provider != provider:
        return False
    if region and region != ALL_REGIONS and row.region != region:
        return False
    haystack = f"{row.model} {row.model_name} {row.provider} {row.provider_name} {row.region}".lower()
    return all(word in haystack for word in q.lower().split())


def trend(*, window: str, model: str = "", provider: str = "") -> dict[str, Any]:
    """Chart data {"labels": [...], "series": [{"label", "ttft": [...], "tps": [...]}]} or empty."""
    selector = optional_function("evaluation.selectors", "leaderboard_trend")
    if selector is None:
        return {"labels": [], "series": []}
    result: dict[str, Any] = selector(window=window, model=model or None, provider=provider or None)
    return result
