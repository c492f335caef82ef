"""The rules over rollup counters: what one raw row adds (``row_counts``), and every metric from the
counters summed over any set of rollups (``evaluate_counts``). Any window is the sum of its rollups,
so every figure is a function of sums; quantiles come from fixed-bucket histograms (within
``sketch.ALPHA`` of the raw-row quantiles), everything else equals the raw-row evaluation."""

from __future__ import annotations

from collections.abc import Mapping

from contracts.usage import Prices
from evaluation.rules.definitions import measures_of
from evaluation.rules.evaluate import evaluate
from evaluation.rules.expr import ProbeRow
from evaluation.rules.spec import Computed, Count, Moments, RatioSums, Sample, Total
from evaluation.stats.estimate import Estimate
from evaluation.stats.sketch import Histogram

Counts = Mapping[str, float]  # one kind's counters
KindCounts = Mapping[str, Counts]  # kind -> counters
_EMPTY: Counts = {}


def histogram(counts: Counts, name: str) -> Histogram:
    prefix = f"{name}:"
    return Histogram({int(k[len(prefix) :]): int(v) for k, v in counts.items() if k.startswith(prefix)})


class CountSource:
    def __init__(self, counts: KindCounts) -> None:
        self.counts = counts

    def _of(self, kind: str) -> Counts:
        return self.counts.get(kind, _EMPTY)

    def total(self, measure: Count | Total) -> float:
        return self._of(measure.kind).get(measure.key, 0.0)

    def quantile(self, sample: Sample, p: float) -> Estimate | None:
        return histogram(self._of(sample.kind), sample.key).quantile_ci(p)

    def sums(self, measure: RatioSums | Moments) -> Mapping[str, float]:
        counts = self._of(measure.kind)
        return {part: counts.get(f"{measure.key}.{part}", 0.0) for part in measure.parts}


def evaluate_counts(counts: KindCounts, prices: Prices | None) -> Computed:
    return evaluate(CountSource(counts), prices)


def row_counts(row: ProbeRow) -> dict[str, float]:
    """The counters one raw probe row adds to its rollup (the SQL in ``rules.sql`` adds the same)."""
    out: dict[str, float] = {}
    for measure in measures_of(row.kind):
        for key, value in measure.counters(row):
            out[key] = out.get(key, 0.0) + value
    return out
