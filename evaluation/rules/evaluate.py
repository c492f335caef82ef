"""Every metric and flag of a window from one ``Source`` (raw rows or summed counters)."""

from __future__ import annotations

from contracts.usage import Prices
from evaluation.rules.definitions import FLAGS, METRICS, PERFORMANCE, PROBES
from evaluation.rules.spec import Computed, Source
from evaluation.stats.estimate import Estimate


def evaluate(source: Source, prices: Prices | None) -> Computed:
    estimates: dict[str, Estimate] = {}
    for metric in METRICS:
        found = metric.estimate(source, prices)
        if found is not None:
            estimates[metric.name] = found
    return Computed(
        n=int(source.total(PROBES[PERFORMANCE])),
        metrics={name: estimate.as_dict() for name, estimate in estimates.items()},
        flags=[flag.name for flag in FLAGS if flag.raised(estimates, source)],
    )
