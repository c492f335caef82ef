"""What a metric rule is made of: measures (what one probe row adds to its rollup counters) and the
estimators that turn a measure into a figure with its 95% interval.

A measure names its probe kind, the rows that count (a condition) and what they add; it can say that
for one row (``counters``, the rollup a raw row feeds), as SQL (``sql_pairs``, the rollup rebuild)
and over many rows (``total``/``samples`` through a ``Source``). An estimator reads a ``Source`` only,
so the same estimator runs over raw rows (``from_rows``) and over summed counters (``from_counts``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from contracts.usage import Prices
from evaluation.rules.expr import ALWAYS, Cond, Present, ProbeRow, Value
from evaluation.stats.estimate import Estimate
from evaluation.stats.means import half_width, mean_ci
from evaluation.stats.proportions import wilson
from evaluation.stats.sketch import bucket

Pair = tuple[str, str]  # SQL: (counter name or NULL, value) for one raw row
# The SQL twin of ``sketch.bucket``; the parameters are bound by the caller (rollup.py) so PostgreSQL
# divides the same float8 values Python does.
SQL_BUCKET = "ceil(ln(greatest({x}, %(min)s)) / %(ln_gamma)s)::bigint"


@dataclass(frozen=True, slots=True)
class Count:
    """Counter ``key`` += 1 for each row of ``kind`` where ``where`` holds."""

    kind: str
    key: str
    where: Cond = ALWAYS

    def counters(self, row: ProbeRow) -> Iterator[tuple[str, float]]:
        if self.where.holds(row):
            yield self.key, 1.0

    def sql_pairs(self) -> list[Pair]:
        return [(f"CASE WHEN {self.where.sql()} THEN '{self.key}' END", "1.0")]


@dataclass(frozen=True, slots=True)
class Total:
    """Counter ``key`` += ``value`` for each row of ``kind`` where ``where`` holds and the value is present."""

    kind: str
    key: str
    value: Value
    where: Cond = ALWAYS

    def counters(self, row: ProbeRow) -> Iterator[tuple[str, float]]:
        if self.where.holds(row) and (value := self.value.of(row)) is not None:
            yield self.key, value

    def sql_pairs(self) -> list[Pair]:
        when = (self.where & Present(self.value)).sql()
        return [(f"CASE WHEN {when} THEN '{self.key}' END", self.value.sql())]


@dataclass(frozen=True, slots=True)
class Sample:
    """A sampled quantity (one value per counted row); rolled up as a histogram ``<key>:<bucket>`` += 1."""

    kind: str
    key: str
    value: Value
    where: Cond = ALWAYS

    def values(self, row: ProbeRow) -> Iterator[float]:
        if self.where.holds(row) and (value := self.value.of(row)) is not None:
            yield value

    def counters(self, row: ProbeRow) -> Iterator[tuple[str, float]]:
        for value in self.values(row):
            yield f"{self.key}:{bucket(value)}", 1.0

    def sql_pairs(self) -> list[Pair]:
        when = (self.where & Present(self.value)).sql()
        return [(f"CASE WHEN {when} THEN '{self.key}:' || {SQL_BUCKET.format(x=self.value.sql())} END", "1.0")]


RATIO_PARTS = ("k", "i", "c", "ii", "cc", "ic")


@dataclass(frozen=True, slots=True)
class RatioSums:
    """The sums a ratio of sums C/I and its delta-method interval need: ``<key>.k`` rows, ``.i``/``.c``
    the denominator and numerator, ``.ii``, ``.cc``, ``.ic`` their squares and product."""

    kind: str
    key: str
    numerator: Value
    denominator: Value
    where: Cond = ALWAYS

    parts: ClassVar[tuple[str, ...]] = RATIO_PARTS

    def counters(self, row: ProbeRow) -> Iterator[tuple[str, float]]:
        if not self.where.holds(row):
            return
        i, c = self.denominator.of(row), self.numerator.of(row)
        if i is None or c is None:
            return
        for part, value in zip(RATIO_PARTS, (1.0, i, c, i * i, c * c, i * c), strict=True):
            yield f"{self.key}.{part}", value

    def sql_pairs(self) -> list[Pair]:
        when = (self.where & Present(self.denominator) & Present(self.numerator)).sql()
        i, c = f"({self.denominator.sql()})", f"({self.numerator.sql()})"
        values = ("1.0", i, c, f"{i} * {i}", f"{c} * {c}", f"{i} * {c}")
        return [
            (f"CASE WHEN {when} THEN '{self.key}.{part}' END", v) for part, v in zip(RATIO_PARTS, values, strict=True)
        ]


MOMENT_PARTS = ("k", "s", "ss")


@dataclass(frozen=True, slots=True)
class Moments:
    """The sums a mean and its t interval need: ``<key>.k`` values, ``.s`` and ``.ss`` the sums of their
    deviations from ``center`` and of those squared (centred so that values near it lose no precision)."""

    kind: str
    key: str
    value: Value
    where: Cond = ALWAYS
    center: float = 1.0

    parts: ClassVar[tuple[str, ...]] = MOMENT_PARTS

    def counters(self, row: ProbeRow) -> Iterator[tuple[str, float]]:
        if not self.where.holds(row) or (value := self.value.of(row)) is None:
            return
        d = value - self.center
        for part, amount in zip(MOMENT_PARTS, (1.0, d, d * d), strict=True):
            yield f"{self.key}.{part}", amount

    def sql_pairs(self) -> list[Pair]:
        when = (self.where & Present(self.value)).sql()
        d = f"(({self.value.sql()}) - {float(self.center)!r}::float8)"
        amounts = ("1.0", d, f"{d} * {d}")
        return [
            (f"CASE WHEN {when} THEN '{self.key}.{part}' END", a) for part, a in zip(MOMENT_PARTS, amounts, strict=True)
        ]


Measure = Count | Total | Sample | RatioSums | Moments


class Source(Protocol):
    """Where estimators read measures from: raw rows or summed counters."""

    def total(self, measure: Count | Total) -> float: ...
    def quantile(self, sample: Sample, p: float) -> Estimate | None: ...
    def sums(self, measure: RatioSums | Moments) -> Mapping[str, float]: ...


def ratio_of_sums(sums: Mapping[str, float], *, prior_sd: float) -> Estimate | None:
    """C/I over k rows. Its 95% interval: the t interval of ``means`` on the rows' linearised ratio
    deviations (c − R·i) / mean(i), so identical rows still leave an interval (``prior_sd``), clamped to [0, 1]."""
    k, total_in = int(sums.get("k", 0)), sums.get("i", 0.0)
    if k == 0 or total_in <= 0:
        return None
    ratio = sums.get("c", 0.0) / total_in
    residual = sums.get("cc", 0.0) - 2 * ratio * sums.get("ic", 0.0) + ratio * ratio * sums.get("ii", 0.0)
    half = half_width(k, residual / (total_in / k) ** 2, prior_sd)
    return Estimate(ratio, max(0.0, ratio - half), min(1.0, ratio + half), k)


# --- estimators (the metrics) --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Quantile:
    """The p-quantile of a sample, with an order-statistic 95% interval."""

    name: str
    sample: Sample
    p: float
    unit: str
    min_n: int

    @property
    def kind(self) -> str:
        return self.sample.kind

    def estimate(self, source: Source, prices: Prices | None) -> Estimate | None:
        return source.quantile(self.sample, self.p)


@dataclass(frozen=True, slots=True)
class Proportion:
    """hits / total with a Wilson interval; ``complement``: (total - hits) / total."""

    name: str
    hits: Count | Total
    total: Count | Total
    min_n: int
    complement: bool = False
    unit: str = "share"

    @property
    def kind(self) -> str:
        return self.total.kind

    def estimate(self, source: Source, prices: Prices | None) -> Estimate | None:
        n, hits = int(source.total(self.total)), int(source.total(self.hits))
        return wilson(n - hits if self.complement else hits, n)


@dataclass(frozen=True, slots=True)
class RatioOfSums:
    """C/I over the rows; ``prior_sd``: the spread of one row's ratio assumed before any is seen (``means``)."""

    name: str
    sums: RatioSums
    min_n: int
    prior_sd: float
    unit: str = "share"

    @property
    def kind(self) -> str:
        return self.sums.kind

    def estimate(self, source: Source, prices: Prices | None) -> Estimate | None:
        return ratio_of_sums(source.sums(self.sums), prior_sd=self.prior_sd)


@dataclass(frozen=True, slots=True)
class Mean:
    """The mean of a sampled value with the t interval of ``means`` (``prior_sd`` as there)."""

    name: str
    moments: Moments
    min_n: int
    prior_sd: float
    unit: str

    @property
    def kind(self) -> str:
        return self.moments.kind

    def estimate(self, source: Source, prices: Prices | None) -> Estimate | None:
        sums = source.sums(self.moments)
        return mean_ci(
            int(sums.get("k", 0)),
            sums.get("s", 0.0),
            sums.get("ss", 0.0),
            center=self.moments.center,
            prior_sd=self.prior_sd,
        )


@dataclass(frozen=True, slots=True)
class BlendedInputPrice:
    """The input price blended with the cache-read price at a hit ratio (needs the offering's prices)."""

    name: str
    hit_ratio: RatioOfSums
    min_n: int
    unit: str = "micro-units per 1M input tokens"

    @property
    def kind(self) -> str:
        return self.hit_ratio.kind

    def estimate(self, source: Source, prices: Prices | None) -> Estimate | None:
        hit = self.hit_ratio.estimate(source, prices)
        if hit is None or prices is None:
            return None

        def price(h: float) -> float:  # decreasing in the hit ratio: the ratio's CI maps to the price's, swapped
            return prices.input * (1 - h) + prices.cache_read * h

        low, high = sorted((price(hit.lo), price(hit.hi)))
        return Estimate(price(hit.value), low, high, hit.n)


Metric = Quantile | Proportion | RatioOfSums | Mean | BlendedInputPrice


# --- flags --------------------------------------------------------------------------------------

Estimates = Mapping[str, Estimate]  # metric name -> estimate (metrics without one are absent)


@dataclass(frozen=True, slots=True)
class ValueAtLeast:
    """Raised when the metric's point estimate is at least ``threshold``."""

    name: str
    metric: str
    threshold: float

    def raised(self, estimates: Estimates, source: Source) -> bool:
        own = estimates.get(self.metric)
        return own is not None and own.value >= self.threshold


@dataclass(frozen=True, slots=True)
class UpperBelow:
    """Raised when even the upper bound of the metric's interval is below ``threshold``."""

    name: str
    metric: str
    threshold: float

    def raised(self, estimates: Estimates, source: Source) -> bool:
        own = estimates.get(self.metric)
        return own is not None and own.hi < self.threshold


@dataclass(frozen=True, slots=True)
class BelowShareOf:
    """Raised when the metric is below ``share`` of a reference metric that is at least ``floor``."""

    name: str
    metric: str
    reference: str
    share: float
    floor: float

    def raised(self, estimates: Estimates, source: Source) -> bool:
        own, reference = estimates.get(self.metric), estimates.get(self.reference)
        return (
            own is not None
            and reference is not None
            and reference.value >= self.floor
            and own.value < self.share * reference.value
        )


@dataclass(frozen=True, slots=True)
class AnyCounted:
    """Raised when at least one row counted for the measure."""

    name: str
    measure: Count

    def raised(self, estimates: Estimates, source: Source) -> bool:
        return source.total(self.measure) > 0


Flag = ValueAtLeast | UpperBelow | BelowShareOf | AnyCounted


@dataclass(slots=True)
class Computed:
    """A window's figures: ``n`` performance probes, ``metrics`` {name: {"value", "lo", "hi", "n"}}, flags."""

    n: int
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
