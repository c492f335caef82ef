"""Every probe metric, read from its one definition three ways, gives the same figure: over the raw
rows, over the counters Python adds per row, and over the counters the rollup SQL builds in
PostgreSQL. Quantiles from the rollup histograms are within a bucket's error (sketch.ALPHA) of the
raw rows' exact ones; everything else is equal."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contracts.usage import Prices
from evaluation.models import ErrorClass, ProbeKind, ProbeResult, Resolution
from evaluation.probes.outcome import Outcome
from evaluation.rules.definitions import FLAGS, METRICS
from evaluation.rules.from_counts import evaluate_counts, row_counts
from evaluation.rules.from_rows import evaluate_rows
from evaluation.rules.spec import Computed, Quantile
from evaluation.services.aggregate import window_counts
from evaluation.services.rollup import build_minutes
from evaluation.stats.sketch import ALPHA
from tests.evaluation.rollup_seed import mixed_rows

pytestmark = [pytest.mark.django_db, pytest.mark.local_servers]
MINUTE = dt.datetime(2026, 3, 2, 10, 15, tzinfo=dt.UTC)
PRICES = Prices(input=3_000_000, output=15_000_000, cache_read=300_000)
QUANTILES = {m.name for m in METRICS if isinstance(m, Quantile)}
# Each kind's own variants, and one that belongs to another kind or to none.
VARIANTS = {
    ProbeKind.PERFORMANCE: ("1k", "10k", "embed", "plain"),
    ProbeKind.CACHE: ("plain", "billing", "stripped", "1k"),
    ProbeKind.PRICE: ("reported_vs_counted", ""),
    ProbeKind.QUALITY: ("canaries", ""),
    ProbeKind.CAPABILITY: ("tools", "json_mode"),
}
ERRORS = st.just("") | st.sampled_from([str(c) for c in ErrorClass])  # half succeed

_positive = st.floats(min_value=0.5, max_value=1e5, allow_nan=False, allow_infinity=False)
_tokens = st.none() | st.integers(min_value=-3, max_value=3) | st.integers(min_value=0, max_value=5000)
_count = st.none() | st.integers(min_value=0, max_value=3000)


@st.composite
def _details(draw: st.DrawFn) -> dict[str, object]:
    details: dict[str, object] = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "token_overcount": st.none() | st.booleans(),
                "price_mismatch": st.none() | st.booleans(),
                "reported_input": _count,
                "counted_input": _count,
                "reported_cost": _count,
                "expected_cost": _count,
            },
        )
    )
    if draw(st.booleans()):  # a scored canary: correct of total
        total = draw(st.integers(min_value=0, max_value=6))
        details |= {"total": total, "correct": draw(st.integers(min_value=0, max_value=total))}
    return details


@st.composite
def _row(draw: st.DrawFn) -> Outcome:
    kind = draw(st.sampled_from(list(VARIANTS)))
    return Outcome(
        str(kind),
        draw(st.sampled_from(VARIANTS[kind])),
        0.0,
        ttft_ms=draw(st.none() | _positive),
        answer_ttft_ms=draw(st.none() | _positive),
        tps=draw(st.none() | _positive),
        total_ms=draw(st.none() | _positive),
        input_tokens=draw(_tokens),
        cached_tokens=draw(_tokens),
        error_class=draw(ERRORS),
        details=draw(_details()),
    )


_rows = st.lists(_row(), max_size=40)


def _counted_in_python(rows: list[Outcome]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for row in rows:
        target = out.setdefault(row.kind, {})
        for key, value in row_counts(row).items():
            target[key] = target.get(key, 0.0) + value
    return out


def _counted_in_sql(rows: list[Outcome]) -> dict[str, dict[str, float]]:
    ProbeResult.objects.all().delete()
    ProbeResult.objects.bulk_create(
        ProbeResult(
            offering_id=1,
            region="beijing",
            started_at=MINUTE + dt.timedelta(milliseconds=i),
            kind=r.kind,
            variant=r.variant,
            ttft_ms=r.ttft_ms,
            answer_ttft_ms=r.answer_ttft_ms,
            tps=r.tps,
            total_ms=r.total_ms,
            input_tokens=r.input_tokens,
            cached_tokens=r.cached_tokens,
            error_class=r.error_class,
            details=r.details,
        )
        for i, r in enumerate(rows)
    )
    build_minutes(MINUTE, MINUTE + dt.timedelta(minutes=1))
    found = window_counts([(Resolution.MINUTE, MINUTE, MINUTE + dt.timedelta(minutes=1))]).get((1, "beijing"), {})
    return {kind: dict(counts) for kind, counts in found.items()}


def _assert_same(got: Computed, want: Computed, *, quantile_rel: float) -> None:
    assert got.n == want.n
    assert got.flags == want.flags
    assert set(got.metrics) == set(want.metrics)
    for name, figure in want.metrics.items():
        assert got.metrics[name]["n"] == figure["n"], name
        rel = quantile_rel if name in QUANTILES else 1e-9
        for part in ("value", "lo", "hi"):
            assert got.metrics[name][part] == pytest.approx(figure[part], rel=rel, abs=2e-6), (name, part)


def _assert_three_ways_agree(rows: list[Outcome]) -> Computed:
    in_python, in_sql = _counted_in_python(rows), _counted_in_sql(rows)
    assert set(in_sql) == set(in_python)
    for kind, counts in in_python.items():
        assert set(in_sql[kind]) == set(counts), kind
        for key, value in counts.items():
            assert in_sql[kind][key] == pytest.approx(value, rel=1e-12), (kind, key)
    raw = evaluate_rows(rows, PRICES)
    from_python, from_sql = evaluate_counts(in_python, PRICES), evaluate_counts(in_sql, PRICES)
    _assert_same(from_sql, from_python, quantile_rel=1e-12)
    _assert_same(from_python, raw, quantile_rel=ALPHA * 1.0001)
    return raw


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_rows)
def test_random_probe_rows_give_the_same_figures_from_rows_counters_and_sql(rows):
    _assert_three_ways_agree(rows)


def test_a_mixed_minute_reaches_every_metric_and_flag_the_same_three_ways():
    seeded = mixed_rows(
        offering_ids=[1], regions=["beijing"], start=MINUTE, end=MINUTE + dt.timedelta(seconds=59), count=400, seed=11
    )
    refused = Outcome("capability", "tools", 0.0, error_class="unsupported")
    broken_cache = [Outcome("cache", "billing", 0.0, input_tokens=2000, cached_tokens=0) for _ in range(40)]
    dishonest = Outcome("price", "reported_vs_counted", 0.0, details={"token_overcount": True, "price_mismatch": True})
    embedded = [Outcome("performance", "embed", 0.0, total_ms=80.0 + 7 * i) for i in range(40)]  # an embedding model
    rows = [
        *seeded,
        *embedded,
        refused,
        *broken_cache,
        *[dishonest] * 60,
        *[Outcome("quality", "canaries", 0.0, details={"correct": 0, "total": 5})] * 30,
    ]
    raw = _assert_three_ways_agree(rows)
    assert set(raw.metrics) == {m.name for m in METRICS}
    assert raw.flags == [f.name for f in FLAGS]
