"""The routing interface: candidates, the default scorer with evaluation statistics, the breaker."""

from __future__ import annotations

from contracts.keyrecord import KeyRecord, RoutingPrefs
from contracts.snapshot import OfferingSnapshot, OfferingStats
from contracts.usage import Prices
from routing.failover.health import HealthBoard
from routing.http.errors import UpstreamFailure
from routing.router.candidates import Need, candidates
from routing.router.prefs import ProviderPrefs, parse
from routing.router.strategy import DefaultScorer, Signals
from routing.upstream.classify import from_status
from tests.waiting import ManualClock


def offering(oid, provider, *, price=1_000_000, quality=0.5, params=("tools",), ctx=100_000, max_out=8000):
    return OfferingSnapshot(
        offering_id=oid,
        model="m",
        provider=provider,
        upstream_model="u",
        dialect="openai",
        base_url="http://x",
        usage_dialect="openai",
        cached_tokens_in_input=True,
        prices=Prices(input=price, output=price * 2),
        context_window=ctx,
        max_output=max_out,
        parameters=params,
        quality=quality,
    )


RECORD = KeyRecord(key_id=1, tenant_id=1, tenant_slug="t", name="k", prefix="p")


def rank(items, mode="balanced", sort=None, affinity=None):
    return [s.offering.provider for s in DefaultScorer().rank(items, mode=mode, sort=sort, affinity=affinity)]


def sig(o, stats=None, cost=None):
    return Signals(o, stats, None, float(cost if cost is not None else o.prices.input))


def test_modes_order_by_what_they_optimise():
    cheap, fast, smart = (
        offering(1, "cheap", price=100_000),
        offering(2, "fast", price=900_000),
        offering(3, "smart", price=1_000_000, quality=0.95),
    )
    stats = {
        2: OfferingStats(2, n=100, ttft_p50_ms=100, tps_p50=200),
        1: OfferingStats(1, n=100, ttft_p50_ms=2000, tps_p50=20),
        3: OfferingStats(3, n=100, ttft_p50_ms=900, tps_p50=40, quality_score=0.95),
    }
    signals = [sig(o, stats[o.offering_id]) for o in (cheap, fast, smart)]
    assert rank(signals, "cost")[0] == "cheap"
    assert rank(signals, "performance")[0] == "fast"
    assert rank(signals, "quality")[0] == "smart"
    assert rank(signals, sort="throughput")[0] == "fast"
    assert rank(signals, sort="price")[0] == "cheap"


def test_unreliable_offering_is_ranked_last_and_affinity_breaks_near_ties():
    a, b = offering(1, "a"), offering(2, "b")
    flaky = OfferingStats(1, n=100, availability=0.6, error_rate=0.3)
    assert rank([sig(a, flaky), sig(b)]) == ["b", "a"]
    assert rank([sig(a), sig(b)], affinity=2)[0] == "b"


def test_candidates_respect_context_output_params_tenant_prefs_and_breaker():
    offerings = (
        offering(1, "a", ctx=1000),
        offering(2, "b", params=()),
        offering(3, "c", max_out=100),
        offering(4, "d"),
    )
    health = HealthBoard(failures_to_open=1, cooldown_s=60)
    need = Need(input_estimate=900, max_tokens=200, params=frozenset({"tools"}))
    pool, _ = candidates(offerings, RECORD, need, ProviderPrefs(), health)
    assert [o.provider for o in pool] == ["d"]
    blocked = KeyRecord(
        key_id=1,
        tenant_id=1,
        tenant_slug="t",
        name="k",
        prefix="p",
        tenant_routing=RoutingPrefs(blocked_providers=("d",)),
    )
    # nothing fits the requested output: the offering with a smaller output limit is used, clamped
    assert [o.provider for o in candidates(offerings, blocked, need, ProviderPrefs(), health)[0]] == ["c"]
    health.failure(4)
    no_fallbacks = ProviderPrefs(allow_fallbacks=False)
    assert candidates(offerings, RECORD, need, no_fallbacks, health) == ([], "all_cooling_down")
    # a caller that allows fallbacks gets the least-bad one tried instead (tests/routing/test_integrity_routing.py)
    assert [o.provider for o in candidates(offerings, RECORD, need, ProviderPrefs(), health)[0]] == ["d"]


def test_breaker_half_opens_after_cooldown_for_one_trial():
    clock = ManualClock()
    health = HealthBoard(failures_to_open=2, cooldown_s=0.05, clock=clock)
    health.failure(1)
    assert health.available(1)
    health.failure(1)
    assert not health.available(1)
    clock.advance(0.049)
    assert not health.available(1)  # still cooling down
    clock.advance(0.011)
    assert health.available(1)
    health.begin(1)
    assert not health.available(1)  # one trial at a time
    health.success(1, 10.0)
    assert health.available(1) and health.get(1).consecutive_failures == 0


def test_an_answer_to_an_attempt_sent_before_the_breaker_opened_is_no_trial():
    """Requests in flight when an offering starts failing still answer after the failures that opened its
    breaker; one of them closing it (and vouching for a recovery) would end the trials it needs."""
    clock = ManualClock()
    health = HealthBoard(failures_to_open=3, cooldown_s=15, clock=clock)
    for _ in range(3):
        health.failure(1)
    clock.advance(0.5)
    health.success(1, 2000.0)  # sent 1.5 s ago: before the failures
    assert not health.available(1) and not health.live(1).recovered
    clock.advance(15)
    assert health.live(1).half_open and health.begin(1)  # it still gets its own trial
    health.success(1, 300.0)
    assert health.available(1) and health.live(1).recovered


def test_retry_after_cools_down_without_opening_the_breaker():
    clock = ManualClock()
    health = HealthBoard(failures_to_open=5, cooldown_s=60, clock=clock)
    health.failure(1, retry_after=0.05)
    assert not health.available(1)
    clock.advance(0.06)
    assert health.available(1)


def test_status_classification():
    assert from_status(429, {"retry-after": "7"}, b"").retry_after == 7
    assert from_status(529, {}, b"").retryable and from_status(500, {}, b"").status == 502
    bad: UpstreamFailure = from_status(400, {}, b'{"error": "bad"}')
    assert not bad.retryable and bad.status == 400


def test_provider_prefs_parse():
    prefs = parse(
        {"order": ["a"], "allow_fallbacks": False, "max_price": {"prompt": 1, "completion": 2}, "sort": "latency"}
    )
    assert (
        prefs.order == ("a",)
        and not prefs.allow_fallbacks
        and prefs.max_price_output == 2.0
        and prefs.sort == "latency"
    )
