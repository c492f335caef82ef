"""The metric rules one by one: each expression means the same in Python and in PostgreSQL on the
awkward rows (nulls, JSON null, zero and negative numbers), the definitions cannot collide, and each
metric counts the probes docs/evaluation.md says it counts."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from django.db import connection

from contracts.usage import Prices
from evaluation.models import ProbeResult
from evaluation.probes.outcome import Outcome
from evaluation.rules.definitions import DOWN, FLAGS, MEASURES, METRICS, OK, PROBES
from evaluation.rules.expr import (
    Column,
    Cond,
    Detail,
    DetailTrue,
    HasDetail,
    Positive,
    Present,
    Product,
    Quotient,
    Value,
    VariantIn,
)
from evaluation.rules.from_rows import evaluate_rows
from evaluation.rules.spec import BlendedInputPrice

DOCS = Path(__file__).resolve().parents[2] / "docs" / "evaluation.md"
AWKWARD = [
    Outcome("performance", "1k", 0.0, ttft_ms=250.0, tps=None, error_class=""),
    Outcome("performance", "10k", 0.0, ttft_ms=None, tps=0.0, error_class="timeout"),
    Outcome("cache", "plain", 0.0, input_tokens=0, cached_tokens=None),
    Outcome("cache", "billing", 0.0, input_tokens=-2, cached_tokens=-1, error_class="rate_limited"),
    Outcome("cache", "stripped", 0.0, input_tokens=1800, cached_tokens=1500),
    Outcome("price", "", 0.0, details={"token_overcount": None, "counted_input": 0, "reported_input": 5}),
    Outcome("price", "", 0.0, details={"token_overcount": False, "price_mismatch": True, "expected_cost": None}),
    Outcome("price", "", 0.0, details={"token_overcount": True, "reported_cost": 0, "expected_cost": 1000}),
    Outcome("quality", "canaries", 0.0, details={"total": None, "correct": 2}),
    Outcome("quality", "canaries", 0.0, details={}),
    Outcome("capability", "tools", 0.0, error_class="unsupported"),
    Outcome("capability", "tools", 0.0, error_class="connect"),
]
CONDITIONS: list[Cond] = [
    OK,
    ~OK,
    DOWN,
    ~OK & ~DOWN,
    VariantIn(("1k", "plain")),
    Positive(Column("input_tokens")),
    Present(Column("tps")),
    Present(Quotient(Detail("reported_input"), Detail("counted_input"))),
    HasDetail("token_overcount"),
    HasDetail("total"),
    DetailTrue("token_overcount"),
    ~DetailTrue("price_mismatch"),
]
VALUES: list[Value] = [
    Column("ttft_ms"),
    Column("cached_tokens", default=0.0),
    Detail("total", default=0.0),
    Detail("correct"),
    Quotient(Detail("reported_cost"), Detail("expected_cost")),
    Quotient(Detail("reported_input"), Detail("counted_input")),
    Product(Column("input_tokens"), Column("cached_tokens", default=0.0)),
]


@pytest.fixture
def awkward_rows() -> list[int]:
    at = dt.datetime(2026, 3, 2, tzinfo=dt.UTC)
    saved = ProbeResult.objects.bulk_create(
        ProbeResult(
            offering_id=1,
            region="beijing",
            started_at=at,
            kind=o.kind,
            variant=o.variant,
            ttft_ms=o.ttft_ms,
            tps=o.tps,
            input_tokens=o.input_tokens,
            cached_tokens=o.cached_tokens,
            error_class=o.error_class,
            details=o.details,
        )
        for o in AWKWARD
    )
    return [row.pk for row in saved]


def _in_sql(expression: str, ids: list[int]) -> list[object]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {expression} FROM evaluation_proberesult r WHERE r.id = ANY(%s) ORDER BY r.id", [ids])
        return [value for (value,) in cursor.fetchall()]


@pytest.mark.django_db
@pytest.mark.parametrize("condition", CONDITIONS, ids=lambda c: c.sql()[:60])
def test_each_condition_holds_for_the_same_rows_in_python_and_postgresql(condition, awkward_rows):
    in_sql = _in_sql(f"coalesce({condition.sql()}, false)", awkward_rows)
    assert in_sql == [condition.holds(row) for row in AWKWARD]


@pytest.mark.django_db
@pytest.mark.parametrize("value", VALUES, ids=lambda v: v.sql()[:60])
def test_each_value_is_the_same_number_or_missing_in_python_and_postgresql(value, awkward_rows):
    in_sql = _in_sql(value.sql(), awkward_rows)
    assert in_sql == [value.of(row) for row in AWKWARD]


def test_a_name_that_is_not_plain_cannot_reach_the_sql():
    for build in (lambda: Detail("total'; DROP TABLE x; --"), lambda: HasDetail("a b"), lambda: Column("ttft ms")):
        with pytest.raises(ValueError, match="not a plain name"):
            build()


def test_no_two_measures_of_a_kind_write_the_same_counter():
    keys = [(m.kind, m.key) for m in MEASURES]
    assert len(keys) == len(set(keys))
    for kind, count in PROBES.items():  # every row of every kind is counted once as "n"
        assert (count.kind, count.key) == (kind, "n")


def test_every_metric_and_flag_is_named_once_and_documented():
    names = [m.name for m in METRICS]
    assert len(names) == len(set(names)) == 21
    assert all(m.min_n >= 3 and m.unit for m in METRICS)
    assert [f.name for f in FLAGS] == [
        "billing_block_breaks_cache",
        "token_overcount",
        "price_mismatch",
        "degraded_quality",
        "capability_mismatch",
    ]
    docs = DOCS.read_text()
    missing = [name for name in [*names, *(f.name for f in FLAGS)] if f"`{name}" not in docs]
    assert not missing


def _perf(variant: str, ttft: float | None, tps: float | None, error: str = "") -> Outcome:
    return Outcome("performance", variant, 0.0, ttft_ms=ttft, tps=tps, error_class=error)


def test_a_rate_limited_probe_is_up_but_an_error_and_feeds_no_latency():
    rows = [_perf("1k", 300.0, 50.0), _perf("1k", None, None, "rate_limited"), _perf("1k", None, None, "timeout")]
    metrics = evaluate_rows(rows, None).metrics
    assert metrics["availability"]["value"] == pytest.approx(2 / 3)  # the 429 answered: up
    assert metrics["error_rate"]["value"] == pytest.approx(2 / 3)
    assert metrics["ttft_p50"]["n"] == metrics["tps"]["n"] == 1
    assert evaluate_rows(rows, None).n == 3


def test_ttft_counts_1k_probes_only_and_throughput_both_sizes():
    rows = [_perf("1k", 300.0, 40.0), _perf("1k", 500.0, 60.0), _perf("10k", 2000.0, 80.0)]
    metrics = evaluate_rows(rows, None).metrics
    assert metrics["ttft_p50"]["value"] == 400.0 and metrics["ttft_p50"]["n"] == 2
    assert metrics["ttft_10k_p50"]["value"] == 2000.0 and metrics["ttft_10k_p50"]["n"] == 1
    assert metrics["tps"]["value"] == 60.0 and metrics["tps"]["n"] == 3


def test_cache_hit_ratio_is_a_ratio_of_sums_over_successful_reading_turns():
    rows = [
        Outcome("cache", "plain", 0.0, input_tokens=1000, cached_tokens=900),
        Outcome("cache", "plain", 0.0, input_tokens=3000, cached_tokens=0),
        Outcome("cache", "plain", 0.0, input_tokens=5000, cached_tokens=5000, error_class="timeout"),  # failed
        Outcome("cache", "plain", 0.0, input_tokens=0, cached_tokens=0),  # no reading turn
    ]
    prices = Prices(input=2_000_000, output=8_000_000, cache_read=200_000)
    metrics = evaluate_rows(rows, prices).metrics
    assert metrics["cache_hit_ratio"]["value"] == pytest.approx(900 / 4000) and metrics["cache_hit_ratio"]["n"] == 2
    price = metrics["effective_input_price"]
    assert price["value"] == pytest.approx(2_000_000 * (1 - 0.225) + 200_000 * 0.225, abs=1e-3)
    hit = metrics["cache_hit_ratio"]  # a higher hit ratio is a lower price: the interval maps swapped
    assert price["lo"] == pytest.approx(2_000_000 * (1 - hit["hi"]) + 200_000 * hit["hi"], rel=1e-6)
    assert "effective_input_price" not in evaluate_rows(rows, None).metrics  # no prices, no price


def test_flags_follow_their_thresholds():
    def price_probe(overcount: bool) -> Outcome:
        return Outcome("price", "reported_vs_counted", 0.0, details={"token_overcount": overcount})

    half = evaluate_rows([price_probe(True), price_probe(False)], None)
    assert "token_overcount" in half.flags  # at least half of the checked probes
    assert "token_overcount" not in evaluate_rows([price_probe(True), *[price_probe(False)] * 2], None).flags
    assert evaluate_rows([Outcome("capability", "tools", 0.0, error_class="timeout")], None).flags == []
    assert evaluate_rows([Outcome("capability", "tools", 0.0, error_class="unsupported")], None).flags == [
        "capability_mismatch"
    ]
    no_cache = [Outcome("cache", v, 0.0, input_tokens=1000, cached_tokens=0) for v in ("plain", "billing")]
    assert "billing_block_breaks_cache" not in evaluate_rows(no_cache, None).flags  # nothing to break


def test_blended_price_is_the_only_metric_that_needs_prices():
    needs = [m.name for m in METRICS if isinstance(m, BlendedInputPrice)]
    assert needs == ["effective_input_price"]
