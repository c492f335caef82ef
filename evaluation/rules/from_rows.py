"""The rules evaluated directly over raw probe rows: exact sample quantiles, sums for the rest."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

from contracts.usage import Prices
from evaluation.rules.evaluate import evaluate
from evaluation.rules.expr import ProbeRow
from evaluation.rules.spec import Computed, Count, Moments, RatioSums, Sample, Total
from evaluation.stats.estimate import Estimate
from evaluation.stats.quantiles import quantile_ci


class RowSource:
    def __init__(self, rows: Iterable[ProbeRow]) -> None:
        self.by_kind: dict[str, list[ProbeRow]] = defaultdict(list)
        for row in rows:
            self.by_kind[row.kind].append(row)

    def total(self, measure: Count | Total) -> float:
        return sum((value for row in self.by_kind[measure.kind] for _, value in measure.counters(row)), 0.0)

    def quantile(self, sample: Sample, p: float) -> Estimate | None:
        return quantile_ci([value for row in self.by_kind[sample.kind] for value in sample.values(row)], p)

    def sums(self, measure: RatioSums | Moments) -> Mapping[str, float]:
        out: dict[str, float] = {}
        for row in self.by_kind[measure.kind]:
            for key, value in measure.counters(row):
                part = key[len(measure.key) + 1 :]
                out[part] = out.get(part, 0.0) + value
        return out


def evaluate_rows(rows: Iterable[ProbeRow], prices: Prices | None) -> Computed:
    """Metrics and flags of these probe rows (``ProbeResult`` rows or probe outcomes, any kinds mixed)."""
    return evaluate(RowSource(rows), prices)
