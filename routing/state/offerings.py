"""The catalog and statistics snapshots, indexed for routing."""

from __future__ import annotations

from collections.abc import Mapping

from contracts.model_names import ModelNames, NameIndex, Resolution
from contracts.snapshot import CatalogSnapshot, OfferingSnapshot, OfferingStats, StatsSnapshot
from routing.state.estimates import OfferingEstimate, StatsPair, estimate_catalog, estimate_solo


class CatalogState:
    def __init__(self, region: str) -> None:
        self.region = region
        self.catalog: CatalogSnapshot | None = None
        self.stats: StatsSnapshot | None = None
        self.by_model: dict[str, tuple[OfferingSnapshot, ...]] = {}
        self.by_id: dict[int, OfferingSnapshot] = {}
        self.names = NameIndex(())
        self._stats_view: Mapping[str, OfferingStats] = {}
        self._stats_fallback: Mapping[str, OfferingStats] = {}
        self._estimates: dict[int, OfferingEstimate] = {}

    def set_catalog(self, catalog: CatalogSnapshot) -> None:
        by_model: dict[str, list[OfferingSnapshot]] = {}
        for offering in catalog.offerings:
            if offering.status != "disabled":
                by_model.setdefault(offering.model, []).append(offering)
        self.by_model = {model: tuple(items) for model, items in by_model.items()}
        self.by_id = {o.offering_id: o for o in catalog.offerings}
        self.names = NameIndex(model_names(catalog, self.by_model))
        self.catalog = catalog
        self._estimate_all()

    def set_stats(self, stats: StatsSnapshot) -> None:
        self._stats_view = stats.stats.get(self.region, {})
        self._stats_fallback = stats.stats.get("all", {})
        self.stats = stats
        self._estimate_all()

    def stats_for(self, offering_id: int) -> OfferingStats | None:
        key = str(offering_id)
        return self._stats_view.get(key) or self._stats_fallback.get(key)

    def stats_pair(self, offering_id: int) -> StatsPair:
        key = str(offering_id)
        return self._stats_view.get(key), self._stats_fallback.get(key)

    def estimate(self, offering: OfferingSnapshot) -> OfferingEstimate:
        """Precomputed per snapshot (routing.state.estimates); the hot path only looks it up."""
        found = self._estimates.get(offering.offering_id)
        return found if found is not None else estimate_solo(offering, self.stats_for(offering.offering_id))

    def _estimate_all(self) -> None:
        authors = {m.slug: m.author for m in self.catalog.models} if self.catalog else {}
        self._estimates = estimate_catalog(self.by_model, authors, self.stats_pair)

    def models(self) -> list[str]:
        return sorted(self.by_model)

    def resolve(self, asked: str, *, family_fallback: bool = False) -> Resolution | None:
        """O(1) for a slug (the common case), dict lookups for an alias, the family rule on a miss
        (only with ``family_fallback``)."""
        if asked in self.by_model:
            return Resolution(asked, asked, "slug")
        return self.names.resolve(asked, family_fallback=family_fallback)


def model_names(catalog: CatalogSnapshot, served: Mapping[str, tuple[OfferingSnapshot, ...]]) -> list[ModelNames]:
    """Names of the models that have an active offering, in the catalog's order (older
    snapshots without ``models``: the order of first appearance among the offerings)."""
    declared = {m.slug: m for m in catalog.models}
    order = [m.slug for m in catalog.models] + [o.model for o in catalog.offerings]
    out: list[ModelNames] = []
    for slug in dict.fromkeys(order):
        if slug in served:
            model = declared.get(slug)
            upstream = tuple(dict.fromkeys(o.upstream_model for o in served[slug]))
            aliases = model.aliases if model else ()
            out.append(ModelNames(slug, upstream, aliases, model.author if model else ""))
    return out
