"""What operators watch about probing: coverage per region and what probing costs."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from django.db.models import Count, Sum
from django.utils import timezone

from catalog.selectors import offerings_active_count
from contracts.usage import Tokens, cost_micros
from evaluation.conf import regions
from evaluation.models import ProbeResult
from evaluation.offerings_to_probe import current_catalog

COVERAGE_WINDOW = dt.timedelta(hours=1)  # performance probes run every 5 min, so an hour shows gaps clearly


@dataclass(frozen=True, slots=True)
class RegionCoverage:
    region: str
    offerings: int  # offerings probed from the region in the last COVERAGE_WINDOW
    probes: int  # probes sent
    active: int  # the catalog's active offerings


@dataclass(frozen=True, slots=True)
class ProbeSpend:
    probes: int
    micros: int  # at each offering's current list prices
    per_region: Mapping[str, int]  # region -> micros


def probe_coverage(*, now: dt.datetime | None = None) -> list[RegionCoverage]:
    """Per configured region, over the last COVERAGE_WINDOW: offerings probed, probes sent, active offerings."""
    since = (now or timezone.now()) - COVERAGE_WINDOW
    rows = (
        ProbeResult.objects.filter(started_at__gte=since)
        .values("region")
        .annotate(offerings=Count("offering_id", distinct=True), probes=Count("id"))
    )
    counts = {row["region"]: (int(row["offerings"]), int(row["probes"])) for row in rows}
    active = offerings_active_count()
    return [RegionCoverage(region, *counts.get(region, (0, 0)), active=active) for region in regions()]


def probe_spend(*, since: dt.datetime, until: dt.datetime | None = None) -> ProbeSpend:
    """What probing cost in [since, until) at each offering's current list prices (probes call providers
    directly, so no usage record holds this). Token counts are the providers' own; probes of offerings
    no longer in the catalog are counted but not priced."""
    until = until or timezone.now()
    prices = {o.offering_id: o.prices for o in current_catalog().offerings}
    rows = (
        ProbeResult.objects.filter(started_at__gte=since, started_at__lt=until)
        .values("offering_id", "region")
        .annotate(n=Count("id"), inp=Sum("input_tokens"), cached=Sum("cached_tokens"), out=Sum("output_tokens"))
    )
    total, probes = 0, 0
    per_region: defaultdict[str, int] = defaultdict(int)
    for row in rows:
        probes += row["n"]
        price = prices.get(row["offering_id"])
        if price is None:
            continue
        cached = int(row["cached"] or 0)
        tokens = Tokens(
            input_uncached=max(0, int(row["inp"] or 0) - cached), cache_read=cached, output=int(row["out"] or 0)
        )
        spent = cost_micros(tokens, price)
        total += spent
        per_region[row["region"]] += spent
    return ProbeSpend(probes=probes, micros=total, per_region=dict(per_region))
