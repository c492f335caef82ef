"""The catalog and statistics snapshots, indexed for routing."""

from __future__ import annotations

from collections.abc import Mapping

from contracts.snapshot import CatalogSnapshot, OfferingSnapshot, OfferingStats, StatsSnapshot


class CatalogState:
    def __init__(self, region: str) -> None:
        self.region = region
        self.catalog: CatalogSnapshot | None = None
        self.stats: StatsSnapshot | None = None
        self.by_model: dict[str, tuple[OfferingSnapshot, ...]] = {}
        self.by_id: dict[int, OfferingSnapshot] = {}
        self._stats_view: Mapping[str, OfferingStats] = {}
        self._stats_fallback: Mapping[str, OfferingStats] = {}

    def set_catalog(self, catalog: CatalogSnapshot) -> None:
        by_model: dict[str, list[OfferingSnapshot]] = {}
        for offering in catalog.offerings:
            if offering.status != "disabled":
                by_model.setdefault(offering.model, []).append(offering)
        self.by_model = {model: tuple(items) for model, items in by_model.items()}
        self.by_id = {o.offering_id: o for o in catalog.offerings}
        self.catalog = catalog

    def set_stats(self, stats: StatsSnapshot) -> None:
        self._stats_view = stats.stats.get(self.region, {})
        self._stats_fallback = stats.stats.get("all", {})
        self.stats = stats

    def stats_for(self, offering_id: int) -> OfferingStats | None:
        key = str(offering_id)
        return self._stats_view.get(key) or self._stats_fallback.get(key)

    def models(self) -> list[str]:
        return sorted(self.by_model)
