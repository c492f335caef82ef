"""The leaderboard table: per offering x region (or "all") x window, every metric with its interval,
own sample count and status, flags, open incidents and, on region "all", the same figures per region.

Wire shape (``LeaderboardRow.as_json``; docs/evaluation.md, "API"): offering_id, model, provider,
region, window, window_start, window_end, n, computed_at, flags, and for each metric in METRICS
``<metric>`` (point estimate, or None below its minimum sample count), ``<metric>_ci`` ([lo, hi] or
None), ``<metric>_n`` (its own sample count) and ``<metric>_status`` ("ok", "needs_more_data",
"no_data"), then incidents, and on region "all" ``by_region`` ({region: n and the same figures}).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from contracts.snapshot import OfferingSnapshot
from evaluation.models import ALL_REGIONS, Aggregate, Incident, WindowState
from evaluation.offerings_to_probe import current_catalog
from evaluation.rules.definitions import FLAGS as FLAG_RULES
from evaluation.rules.definitions import METRICS as METRIC_RULES
from evaluation.services.aggregate import WINDOWS as WINDOWS  # re-exported: the windows readers may ask for
from evaluation.services.aggregate import window_end, window_start

METRICS = tuple(metric.name for metric in METRIC_RULES)
# Below this many samples a figure is withheld ("needs_more_data"); the reasons are in rules/definitions.py.
MIN_N = {metric.name: metric.min_n for metric in METRIC_RULES}
SORT_KEYS = (*METRICS, "n", "model", "provider", "region")
DEFAULT_SORT = "ttft_p50"
FLAGS = tuple(flag.name for flag in FLAG_RULES)

Status = Literal["ok", "needs_more_data", "no_data"]


@dataclass(frozen=True, slots=True)
class MetricFigure:
    """One metric as the leaderboard shows it: withheld (value and ci None) below its minimum n."""

    value: float | None
    ci: tuple[float, float] | None
    n: int
    status: Status


@dataclass(frozen=True, slots=True)
class RegionFigures:
    n: int
    figures: Mapping[str, MetricFigure]  # every name in METRICS

    def as_json(self) -> dict[str, object]:
        return {"n": self.n, **_flat(self.figures)}


@dataclass(frozen=True, slots=True)
class OpenIncident:
    """An open incident as listed on its offering's row."""

    id: int
    region: str
    metric: str
    direction: str
    opened_at: str  # ISO 8601
    baseline: float
    observed: float

    def as_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "region": self.region,
            "metric": self.metric,
            "direction": self.direction,
            "opened_at": self.opened_at,
            "baseline": self.baseline,
            "observed": self.observed,
        }


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    offering_id: int
    model: str
    provider: str
    region: str
    window: str
    window_start: str | None
    window_end: str | None
    n: int  # performance probes in the window
    computed_at: str
    flags: tuple[str, ...]
    figures: Mapping[str, MetricFigure]  # every name in METRICS
    incidents: tuple[OpenIncident, ...] = ()
    by_region: Mapping[str, RegionFigures] | None = None  # region "all" only

    def value(self, key: str) -> float | int | str | None:
        """What ``sort`` orders by: a metric's shown value, or n, model, provider, region."""
        if key in self.figures:
            return self.figures[key].value
        found: float | int | str | None = getattr(self, key)
        return found

    def as_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "offering_id": self.offering_id,
            "model": self.model,
            "provider": self.provider,
            "region": self.region,
            "window": self.window,
            "window_start": self.window_start,
            "window_end": self.window_end,
            "n": self.n,
            "computed_at": self.computed_at,
            "flags": list(self.flags),
            **_flat(self.figures),
            "incidents": [incident.as_json() for incident in self.incidents],
        }
        if self.by_region is not None:
            out["by_region"] = {region: figures.as_json() for region, figures in self.by_region.items()}
        return out


def _flat(figures: Mapping[str, MetricFigure]) -> dict[str, object]:
    out: dict[str, object] = {}
    for name, figure in figures.items():
        out[name] = figure.value
        out[f"{name}_ci"] = list(figure.ci) if figure.ci else None
        out[f"{name}_n"] = figure.n
        out[f"{name}_status"] = figure.status
    return out


def figures(metrics: Mapping[str, Mapping[str, Any]]) -> dict[str, MetricFigure]:
    """Every metric of an aggregate (``{name: {"value", "lo", "hi", "n"}}``), minimum n applied."""
    out: dict[str, MetricFigure] = {}
    for name in METRICS:
        item = metrics.get(name)
        n = int(item["n"]) if item else 0
        status: Status = "no_data" if n == 0 else "needs_more_data" if n < MIN_N[name] else "ok"
        if item and status == "ok":
            out[name] = MetricFigure(item["value"], (item["lo"], item["hi"]), n, status)
        else:
            out[name] = MetricFigure(None, None, n, status)
    return out


def window_bounds(window: str, computed_at: dt.datetime | None = None) -> tuple[str, str] | None:
    """(start, end) of the window's aggregates: from its WindowState, else from a row's computed_at."""
    state = WindowState.objects.filter(window=window).values_list("end", flat=True).first()
    end = state or (window_end(computed_at) if computed_at else None)
    return None if end is None else (window_start(window, end).isoformat(), end.isoformat())


def leaderboard_window(window: str) -> tuple[str | None, str | None]:
    """(window_start, window_end) of the window's latest aggregates, or (None, None) before the first refresh."""
    latest = (
        Aggregate.objects.filter(window=window).order_by("-computed_at").values_list("computed_at", flat=True).first()
    )
    return window_bounds(window, latest) or (None, None)


def _open_by_offering(offering_ids: Iterable[int], region: str) -> dict[int, list[OpenIncident]]:
    qs = Incident.objects.filter(closed_at__isnull=True, offering_id__in=list(offering_ids)).order_by("-opened_at")
    if region != ALL_REGIONS:
        qs = qs.filter(region=region)
    found: dict[int, list[OpenIncident]] = defaultdict(list)
    for incident in qs:
        found[incident.offering_id].append(
            OpenIncident(
                id=incident.pk,
                region=incident.region,
                metric=incident.metric,
                direction=incident.direction,
                opened_at=incident.opened_at.isoformat(),
                baseline=incident.baseline,
                observed=incident.observed,
            )
        )
    return found


def _row(agg: Aggregate, offering: OfferingSnapshot, bounds: tuple[str, str] | None) -> LeaderboardRow:
    start, end = bounds or window_bounds(agg.window, agg.computed_at) or (None, None)
    return LeaderboardRow(
        offering_id=agg.offering_id,
        model=offering.model,
        provider=offering.provider,
        region=agg.region,
        window=agg.window,
        window_start=start,
        window_end=end,
        n=agg.n,
        computed_at=agg.computed_at.isoformat(),
        flags=tuple(agg.flags),
        figures=figures(agg.metrics),
    )


def _sorted(rows: list[LeaderboardRow], sort: str) -> list[LeaderboardRow]:
    key, descending = sort.lstrip("-"), sort.startswith("-")
    present = [r for r in rows if r.value(key) is not None]
    missing = [r for r in rows if r.value(key) is None]  # rows without the metric go last either way
    present.sort(key=lambda r: (r.value(key), r.offering_id), reverse=descending)
    return present + missing


def leaderboard_rows(
    *,
    window: str = "1h",
    region: str = ALL_REGIONS,
    model: str | None = None,
    provider: str | None = None,
    sort: str = DEFAULT_SORT,
) -> list[LeaderboardRow]:
    offerings = {
        o.offering_id: o
        for o in current_catalog().offerings
        if (model is None or o.model == model) and (provider is None or o.provider == provider)
    }
    aggregates = Aggregate.objects.filter(window=window, offering_id__in=list(offerings))
    if region != ALL_REGIONS:
        aggregates = aggregates.filter(region=region)
    rows: list[LeaderboardRow] = []
    regional: dict[int, dict[str, RegionFigures]] = defaultdict(dict)
    bounds = window_bounds(window)
    for agg in aggregates.order_by("offering_id", "region"):
        if agg.region == region:
            rows.append(_row(agg, offerings[agg.offering_id], bounds))
        else:  # region "all": the per-region figures go beside the overall ones
            regional[agg.offering_id][agg.region] = RegionFigures(agg.n, figures(agg.metrics))
    incidents = _open_by_offering((r.offering_id for r in rows), region)
    rows = [
        replace(
            row,
            incidents=tuple(incidents.get(row.offering_id, [])),
            by_region=regional.get(row.offering_id, {}) if region == ALL_REGIONS else None,
        )
        for row in rows
    ]
    return _sorted(rows, sort)
