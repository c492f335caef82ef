"""The default scorer without HTTP: priors, shrinkage, truth-aware cost, flags, live fading, explanation."""

from __future__ import annotations

import pytest

from contracts.keyrecord import KeyRecord
from contracts.snapshot import CatalogSnapshot, ModelSnapshot, OfferingSnapshot, OfferingStats, StatsSnapshot
from contracts.usage import Prices
from routing.failover.health import HealthBoard
from routing.router.candidates import Need
from routing.router.prefs import ProviderPrefs
from routing.router.route import plan
from routing.router.strategy import DefaultScorer
from routing.state import priors
from routing.state.offerings import CatalogState
from tests.waiting import ManualClock

RECORD = KeyRecord(key_id=1, tenant_id=1, tenant_slug="t", name="k", prefix="p")
NEED = Need(input_estimate=2000, max_tokens=None, params=frozenset())


def offering(oid, provider, *, price=280_000, out=420_000, cache_read=28_000, cache_policy="normalized"):
    return OfferingSnapshot(
        offering_id=oid,
        model="m",
        provider=provider,
        upstream_model="u",
        dialect="openai",
        base_url="http://x",
        usage_dialect="openai",
        cached_tokens_in_input=True,
        context_window=100_000,
        max_output=8000,
        prices=Prices(input=price, output=out, cache_read=cache_read),
        cache_policy=cache_policy,
        quality=0.8,
    )


FLEET = (
    offering(1, "vendor"),
    offering(2, "vendor-anthropic"),
    offering(3, "reseller", price=270_000, cache_read=0, cache_policy="none"),
    offering(4, "bargain", price=200_000, out=300_000, cache_read=20_000),
)


def state(stats=None, clock=None):
    s = CatalogState("beijing")
    s.set_catalog(CatalogSnapshot(1, 0.0, FLEET, models=(ModelSnapshot("m", "vendor"),)))
    if stats is not None:
        s.set_stats(StatsSnapshot(1, 0.0, "1h", {"all": {str(x.offering_id): x for x in stats}}))
    return s


def route(s, mode="balanced", affinity=None, health=None, need=NEED):
    health = health or HealthBoard(failures_to_open=3, cooldown_s=15)
    return plan(
        state=s,
        health=health,
        strategy=DefaultScorer(),
        record=RECORD,
        model="m",
        need=need,
        prefs=ProviderPrefs(),
        mode=mode,
        affinity=affinity,
    )


def honest(oid, **kw):
    base = {"n": 60, "ttft_p50_ms": 500.0, "tps_p50": 60.0, "error_rate": 0.0, "price_n": 3, "overcount_factor": 1.0,
            "quality_score": 1.0, "quality_n": 40}  # fmt: skip
    return OfferingStats(oid, **{**base, **kw})


def test_shrinkage_pulls_small_samples_to_the_prior_and_bounds_are_pessimistic():
    assert priors.shrink(None, 800, 0, 10) == 800
    assert priors.shrink(100, 800, 10, 10) == 450
    one_failure = priors.upper_share(1.0, priors.PRIOR_ERROR_RATE, 2, priors.K_RELIABILITY)
    assert one_failure < 0.3  # one failed probe pair is not an outage
    assert priors.upper_share(0.0, 0.02, 1000, 20) < priors.upper_share(0.0, 0.02, 0, 20)


def test_catalog_only_never_prefers_the_cheap_unverified_reseller_in_any_mode():
    s = state()
    for mode in ("balanced", "cost", "performance", "quality"):
        r = route(s, mode)
        assert r.offerings[0].provider in ("vendor", "vendor-anthropic"), mode
        assert r.offerings[-1].provider in ("bargain", "reseller") and r.offerings[0].provider != "bargain"


def test_after_integrity_probes_flagged_offering_is_last_resort_and_honest_reseller_competes():
    flagged = OfferingStats(
        4,
        n=60,
        ttft_p50_ms=300.0,
        tps_p50=200.0,
        price_n=3,
        overcount_factor=1.15,
        billed_ratio=1.3,
        quality_score=0.6,
        quality_n=40,
        flags=("token_overcount", "price_mismatch", "degraded_quality"),
    )
    s = state([honest(1), honest(2), honest(3, price_n=30), flagged])
    for mode in ("balanced", "cost", "performance", "quality"):
        r = route(s, mode)
        assert r.offerings[-1].provider == "bargain", mode
        bargain = next(c for c in r.candidates() if c.provider == "bargain")
        assert bargain.verdict == "lost:flags" and "price_mismatch" in bargain.flags
    assert route(s, "cost").offerings[0].provider == "reseller"  # verified and cheapest
    assert s.estimate(FLEET[3]).price_factor > 1.4  # measured over-count × over-billing


def test_expected_cost_uses_cache_affinity_and_measured_hit_ratio():
    s = state([honest(1, cache_hit_ratio=0.9, cache_hit_lo=0.85, cache_n=40), honest(2), honest(3, price_n=30),
               honest(4, price_n=30)])  # fmt: skip
    big = Need(input_estimate=50_000, max_tokens=None, params=frozenset())
    r = route(s, "cost", affinity=1, need=big)
    assert r.offerings[0].provider == "vendor" and r.reason == "cost:vendor:cost"
    no_cache = route(s, "performance", affinity=3, need=big)  # holds the prefix, but caches nothing
    assert next(c for c in no_cache.candidates() if c.provider == "reseller").parts.get("affinity", 0) == 0


def test_flags_and_incidents_demote_with_their_documented_penalties():
    s = state([honest(1, incidents=("availability",)), honest(2), honest(3, flags=("capability_mismatch",))])
    r = route(s)
    assert r.offerings[0].provider == "vendor-anthropic"
    vendor = next(c for c in r.candidates() if c.provider == "vendor")
    assert vendor.parts["flags"] == 2.0 and "incident:availability" in vendor.flags


def test_live_errors_fade_with_time_and_a_half_open_breaker_gets_the_trial():
    clock = ManualClock()
    health = HealthBoard(failures_to_open=3, cooldown_s=15, clock=clock)
    s = state([honest(1), honest(2, ttft_p50_ms=900.0), honest(3, price_n=30), honest(4, price_n=30)])
    best = route(s, health=health).offerings[0].offering_id
    for _ in range(3):
        health.failure(best)
    assert route(s, health=health).offerings[0].offering_id != best  # open breaker: dropped
    assert any(c.verdict == "dropped:cooling_down" for c in route(s, health=health).candidates())
    clock.advance(15)
    assert health.live(best).half_open and route(s, health=health).offerings[0].offering_id == best  # the trial
    health.begin(best)
    health.failure(best)  # the trial failed: open again
    clock.advance(15)
    health.begin(best)
    health.success(best, 400.0)  # recovered
    assert health.live(best).error_rate > 0.1  # the failures still count...
    clock.advance(60)
    assert health.live(best).error_rate < 0.01  # ...but a minute later they have faded without traffic
    assert route(s, health=health).offerings[0].offering_id == best


def test_explanation_lists_dropped_candidates_with_their_filter():
    s = state([honest(1), honest(2), honest(3, price_n=30)])
    r = plan(
        state=s,
        health=HealthBoard(failures_to_open=3, cooldown_s=15),
        strategy=DefaultScorer(),
        record=RECORD,
        model="m",
        need=NEED,
        prefs=ProviderPrefs(ignore=("reseller",)),
        mode="balanced",
        affinity=None,
    )
    assert [c.verdict for c in r.candidates() if c.provider == "reseller"] == ["dropped:not_allowed"]
    assert r.candidates()[0].verdict == "winner" and r.candidates()[0].provider == r.offerings[0].provider


@pytest.mark.parametrize("mode", ["balanced", "performance"])
def test_explanation_sums_parts_to_the_score(mode):
    s = state([honest(1, ttft_p50_ms=200.0), honest(2, ttft_p50_ms=2000.0), honest(3, price_n=30)])
    r = route(s, mode)
    assert r.reason == f"{mode}:vendor:ttft"
    winner, *others = r.candidates()
    assert winner.verdict == "winner" and winner.provider == "vendor"
    assert {c.verdict.split(":")[0] for c in others} == {"lost"}
    for c in r.candidates():
        assert sum(c.parts.values()) == pytest.approx(c.score, abs=0.01)


def test_a_failing_explanation_leaves_the_usage_event_without_candidates():
    from routing.handoff.call import Call

    call = object.__new__(Call)
    call.request_id = "req-x"

    def broken() -> tuple:
        raise ZeroDivisionError

    call.explain_route = broken
    assert call.route_candidates == ()


def test_auto_picks_the_model_by_mode_and_keeps_fallbacks_within_it():
    from dataclasses import replace

    from routing.router.auto import plan_auto, virtual_mode

    cheap = [replace(o, model="small", quality=0.7) for o in FLEET[:2]]
    smart = [
        replace(o, offering_id=o.offering_id + 10, model="big", quality=0.95, prices=Prices(2_000_000, 8_000_000))
        for o in FLEET[:2]
    ]
    s = CatalogState("beijing")
    s.set_catalog(
        CatalogSnapshot(
            1, 0.0, (*cheap, *smart), models=(ModelSnapshot("small", "vendor"), ModelSnapshot("big", "vendor"))
        )
    )
    assert (virtual_mode("auto"), virtual_mode("auto:cost"), virtual_mode("auto:x"), virtual_mode("m")) == (
        "",
        "cost",
        None,
        None,
    )

    def auto(mode, record=RECORD):
        return plan_auto(
            state=s,
            health=HealthBoard(failures_to_open=3, cooldown_s=15),
            strategy=DefaultScorer(),
            record=record,
            need=NEED,
            prefs=ProviderPrefs(),
            mode=mode,
            affinity=None,
        )

    assert {o.model for o in auto("cost").offerings} == {"small"} and auto("cost").reason.startswith("auto:small;cost:")
    assert {o.model for o in auto("quality").offerings} == {"big"}
    only_big = replace(RECORD, allowed_models=("big",))
    assert {o.model for o in auto("cost", only_big).offerings} == {"big"}


def test_the_freshest_window_outweighs_the_hours_older_samples():
    from routing.state.estimates import estimate_solo, fresh_first

    assert fresh_first(0.2, 60, 0.0, 15) == (pytest.approx(0.2 * 11.25 / 26.25), 26.25)  # 45 older at a quarter
    assert fresh_first(0.2, 60, None, 0) == (0.2, 60.0)  # no fresh window: the hour as before
    [o] = FLEET[:1]
    failed_long_ago = estimate_solo(o, honest(1, error_rate=0.25, recent_n=15, recent_error_rate=0.0))
    failing_now = estimate_solo(o, honest(1, error_rate=0.25, recent_n=15, recent_error_rate=1.0))
    hour_only = estimate_solo(o, honest(1, error_rate=0.25))
    assert failed_long_ago.unreliability < hour_only.unreliability < failing_now.unreliability
    still_slow = estimate_solo(o, honest(1, incidents=("ttft",), recent_n=15, recent_ttft_p50_ms=1500.0))
    back = estimate_solo(o, honest(1, incidents=("ttft",), recent_n=15, recent_ttft_p50_ms=520.0))
    assert still_slow.flag_penalty == 1.0 and back.flag_penalty == 0.0 and back.ttft_ms < still_slow.ttft_ms
    # What a recovered offering is scored on: the hour's median, not the freshest window nor the median's
    # upper bound, which an hour with a third of its samples 6x slow puts at the slow ones.
    assert still_slow.latency_penalty == 1.0 and back.latency_penalty == 0.0
    bimodal = estimate_solo(o, honest(1, ttft_p50_hi_ms=3000.0, recent_n=15, recent_ttft_p50_ms=3000.0))
    assert bimodal.ttft_ms > 2000 and bimodal.hour_ttft_ms == pytest.approx(500.0)


def test_a_half_open_breaker_and_its_successful_trial_outrank_evaluations_record_of_the_fault():
    clock = ManualClock()
    health = HealthBoard(failures_to_open=3, cooldown_s=15, clock=clock)
    figures = {1: honest(1), 2: honest(2, ttft_p50_ms=900.0), 3: honest(3, price_n=30), 4: honest(4, price_n=30)}
    best = route(state(list(figures.values()))).offerings[0].offering_id
    figures[best] = honest(best, error_rate=0.25, availability=0.75, incidents=("availability",))
    s = state(list(figures.values()))
    assert route(s, health=health).offerings[0].offering_id != best  # evaluation's record holds it down
    for _ in range(3):
        health.failure(best)
    assert health.drain_opened() == {best} and health.drain_opened() == set()  # evaluation is asked to re-probe
    clock.advance(15)
    assert route(s, health=health).offerings[0].offering_id == best  # half-open: the trial can win
    health.begin(best)
    health.success(best, 400.0)
    assert health.live(best).recovered
    clock.advance(60)
    assert route(s, health=health).offerings[0].offering_id == best  # the trial worked: it keeps its traffic
    health.failure(best)  # failing again: trust ends, evaluation's record counts again
    assert not health.live(best).recovered and route(s, health=health).offerings[0].offering_id != best


def test_a_slowdowns_half_open_trial_can_win_and_a_fast_one_outranks_evaluations_latency_record():
    """Slow for minutes: evaluation's freshest window and its TTFT and throughput incidents hold the fault
    and the live TTFT holds slow answers. The breaker's trial (its deadline opened it) must be able to win
    against all of that; once a trial is fast, the offering keeps its traffic on the hour's figures and a
    live TTFT that starts again from the trial."""
    clock = ManualClock()
    health = HealthBoard(failures_to_open=3, cooldown_s=15, clock=clock)
    figures = {1: honest(1), 2: honest(2, ttft_p50_ms=900.0), 3: honest(3, price_n=30), 4: honest(4, price_n=30)}
    best = route(state(list(figures.values()))).offerings[0].offering_id
    slow = {"recent_n": 10, "recent_ttft_p50_ms": 3000.0, "recent_tps_p50": 10.0, "incidents": ("tps", "ttft")}
    figures[best] = honest(best, **slow)
    s = state(list(figures.values()))
    assert route(s, health=health).offerings[0].offering_id != best  # evaluation's latency record holds it down
    for _ in range(5):
        health.success(best, 3000.0)  # slow answers before the deadline failures
    for _ in range(3):
        health.failure(best)
    assert route(s, health=health).offerings[0].offering_id != best
    clock.advance(15)
    assert route(s, health=health).offerings[0].offering_id == best  # half-open: the trial can win
    assert health.begin(best) and not health.begin(2)  # a trial; the others' attempts are not
    health.success(best, 450.0)
    assert health.live(best).recovered and health.live(best).latency_ms == 450.0  # restarted from the trial
    clock.advance(60)
    r = route(s, health=health)
    assert r.offerings[0].offering_id == best
    winner = r.candidates()[0]
    assert winner.parts.get("flags", 0.0) == 0.0 and "recovered" in winner.flags
    health.failure(best)  # failing again: evaluation's latency record counts again
    assert route(s, health=health).offerings[0].offering_id != best
