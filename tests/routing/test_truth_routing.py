"""Truth-aware routing through the real gateway and the simulated fleet: the dishonest reseller of the
demo (bargain-cloud) never wins, a flagged offering is demoted, a recovered one is back within a minute,
and the usage event carries the explanation."""

from __future__ import annotations

import asyncio
import time

import orjson
import pytest
import requests

from contracts import redis_keys as rk
from contracts.snapshot import OfferingStats, StatsSnapshot
from tests.routing.conftest import add_fault
from tests.waiting import ManualClock, wait_until

pytestmark = pytest.mark.cluster

MSG = [{"role": "user", "content": "Say hello."}]
MODES = ("balanced", "cost", "performance", "quality")
RESOLD = ("deepseek-v3.2", "kimi-k2", "glm-4.6")  # the models bargain-cloud resells


def publish_stats(gateway, client, stats: dict[str, OfferingStats]) -> None:
    """What evaluation's snapshot builder publishes (evaluation.services.snapshot), then wait for the gateway."""
    stamp = time.time()
    doc = StatsSnapshot(
        version=int(client.incr(rk.STATS_VERSION)), generated_at=stamp, window="1h", stats={"all": stats}
    )
    client.set(rk.STATS_SNAPSHOT, doc.to_json())
    client.incr(rk.STATS_VERSION)
    client.publish(rk.SNAPSHOT_CHANNEL, "stats")
    catalog = gateway.gateway.catalog
    wait_until(lambda: catalog.stats is not None and catalog.stats.generated_at == stamp, timeout=5, message="stats")


def chat(gateway, tenant, model, mode="balanced", **body):
    response = requests.post(
        f"{gateway.base_url}/v1/chat/completions",
        json={"model": model, "messages": MSG, "max_tokens": 16, **body},
        headers={"authorization": f"Bearer {tenant.key}", "x-tokenway-route": mode},
        timeout=20,
    )
    assert response.status_code == 200, response.text
    return response


def offering_id(gateway, model, provider):
    return next(o.offering_id for o in gateway.gateway.catalog.by_model[model] if o.provider == provider)


def event_of(tenant, request_id):
    raw = tenant.client.get(rk.generation(request_id))
    assert raw is not None
    return orjson.loads(raw)


def fast(oid, **kw):
    base = {"n": 100, "ttft_p50_ms": 300.0, "tps_p50": 80.0, "error_rate": 0.0, "availability": 1.0}
    return OfferingStats(oid, **{**base, **kw})


def slow(oid, **kw):
    return fast(oid, ttft_p50_ms=1500.0, tps_p50=40.0, **kw)


def integrity_stats(gateway, models) -> dict[str, OfferingStats]:
    """Run the real price and quality probes against the fleet and aggregate them as evaluation does."""
    from evaluation.models import Aggregate
    from evaluation.probes.outcome import Outcome
    from evaluation.rules.from_rows import evaluate_rows
    from evaluation.runner import Job, run_jobs
    from evaluation.services.snapshot import offering_stats

    by_id = {o.offering_id: o for m in models for o in gateway.gateway.catalog.by_model[m]}
    jobs = [Job(oid, kind) for oid in by_id for kind in ("price", "quality") for _ in range(2)]
    results = asyncio.run(run_jobs(jobs, by_id, region="beijing"))
    rows: dict[int, list[Outcome]] = {}
    for job, outcomes in results:
        rows.setdefault(job.offering_id, []).extend(outcomes)
    out = {}
    for oid, details in rows.items():
        computed = evaluate_rows(details, by_id[oid].prices)
        agg = Aggregate(offering_id=oid, region="all", window="1h", n=0, metrics=computed.metrics, flags=computed.flags)
        out[str(oid)] = offering_stats(agg)
    return out


def test_fresh_demo_never_routes_to_the_dishonest_reseller(gateway, tenant, redis_client):
    publish_stats(gateway, redis_client, {})  # a fresh deployment: the catalog, no statistics yet
    for model in RESOLD:
        for mode in MODES:
            assert chat(gateway, tenant, model, mode).headers["x-tokenway-provider"] != "bargain-cloud", (model, mode)
        sorted_by_price = chat(gateway, tenant, model, provider={"sort": "price"})
        assert sorted_by_price.headers["x-tokenway-provider"] != "bargain-cloud", model
    stats = integrity_stats(gateway, RESOLD)
    bargain = stats[str(offering_id(gateway, "deepseek-v3.2", "bargain-cloud"))]
    assert "token_overcount" in bargain.flags and bargain.overcount_factor > 1.1  # canaries may flag it too
    publish_stats(gateway, redis_client, stats)
    for model in RESOLD:
        for mode in MODES:
            response = chat(gateway, tenant, model, mode)
            assert response.headers["x-tokenway-provider"] != "bargain-cloud", (model, mode)
        verdicts = {
            c["provider"]: c["verdict"] for c in event_of(tenant, response.headers["x-request-id"])["route_candidates"]
        }
        assert verdicts["bargain-cloud"] == "lost:flags"


def test_flagged_offering_is_demoted_and_the_record_says_why(gateway, tenant, redis_client):
    model = "deepseek-v3.2"
    best = offering_id(gateway, model, "deepseek")
    others = {str(o.offering_id): slow(o.offering_id) for o in gateway.gateway.catalog.by_model[model]}
    publish_stats(gateway, redis_client, {**others, str(best): fast(best)})
    first = chat(gateway, tenant, model)
    assert first.headers["x-tokenway-provider"] == "deepseek"
    assert first.headers["x-tokenway-route"] == "balanced:deepseek:ttft"
    publish_stats(gateway, redis_client, {**others, str(best): fast(best, flags=("price_mismatch",))})
    demoted = chat(gateway, tenant, model)
    assert demoted.headers["x-tokenway-provider"] != "deepseek"
    mode, winner, factor = demoted.headers["x-tokenway-route"].split(":")
    assert (mode, winner) == ("balanced", demoted.headers["x-tokenway-provider"]) and factor
    [*_, event] = [e for e in tenant.wait_events(2) if e["request_id"] == demoted.headers["x-request-id"]]
    candidates = {c["provider"]: c for c in event["route_candidates"]}
    assert candidates[winner]["verdict"] == "winner"
    assert candidates["deepseek"]["verdict"] == "lost:flags" and "price_mismatch" in candidates["deepseek"]["flags"]
    assert candidates["deepseek"]["parts"]["flags"] == 4.0 and "score" in candidates["deepseek"]


def test_a_recovered_offering_is_back_within_a_minute(gateway, sim, tenant, redis_client):
    model = "deepseek-v3.2"
    best = offering_id(gateway, model, "deepseek")
    others = {str(o.offering_id): slow(o.offering_id) for o in gateway.gateway.catalog.by_model[model]}
    publish_stats(gateway, redis_client, {**others, str(best): fast(best)})
    clock = ManualClock(time.time())
    gateway.gateway.health.set_clock(clock)
    try:
        assert chat(gateway, tenant, model).headers["x-tokenway-provider"] == "deepseek"
        add_fault(sim, provider="deepseek", kind="http_503")
        for _ in range(3):  # each fails over before the first byte; the third opens the breaker
            assert chat(gateway, tenant, model).headers["x-tokenway-provider"] != "deepseek"
        assert not gateway.gateway.health.available(best)
        requests.delete(f"{sim.base_url}/_sim/faults", timeout=5)  # the provider recovers
        assert chat(gateway, tenant, model).headers["x-tokenway-provider"] != "deepseek"  # still cooling down
        # The failures are merged into the shared live signals by the next periodic sync, stamped with the
        # board's clock: let that happen before the clock jumps, as it would within a second in real time.
        health = gateway.gateway.health
        wait_until(lambda: health.get(best).pending.failed == 0, timeout=5, message="the failures were shared")
        clock.advance(59)  # no traffic to it for 59 s: half-open, and its error EWMA has faded
        back = chat(gateway, tenant, model)
        assert back.headers["x-tokenway-provider"] == "deepseek"  # the trial request
        # It stays: without the fade, the errors of a minute ago (EWMA ≈ 0.5) would still outweigh its speed.
        assert gateway.gateway.health.live(best).error_rate < 0.05
        assert chat(gateway, tenant, model).headers["x-tokenway-provider"] == "deepseek"
    finally:
        gateway.gateway.health.set_clock(time.time)


@pytest.mark.parametrize("mode", MODES)
def test_route_header_names_mode_winner_and_deciding_factor(gateway, tenant, redis_client, mode):
    publish_stats(gateway, redis_client, {})
    response = chat(gateway, tenant, "gpt-4.1-mini", mode)
    parts = response.headers["x-tokenway-route"].split(":")
    assert parts[0] == mode and parts[1] == response.headers["x-tokenway-provider"] and len(parts) == 3


@pytest.mark.parametrize("asked", ["auto", "auto:cost", "auto:performance", "auto:quality"])
def test_virtual_models_choose_an_allowed_model_and_name_it(gateway, redis_client, asked):
    from tests.routing.harness import make_tenant

    publish_stats(gateway, redis_client, {})
    allowed = ("deepseek-v3.2", "kimi-k2", "gpt-4.1-mini")
    t = make_tenant(redis_client, allowed_models=allowed)
    response = chat(gateway, t, asked)
    body = response.json()
    model = response.headers["x-tokenway-offering"].split("/", 1)[1]
    assert model in allowed and body["model"] == model
    assert response.headers["x-tokenway-provider"] != "bargain-cloud"
    assert response.headers["x-tokenway-route"].startswith(f"auto:{model};")
    [event] = t.wait_events(1)
    assert event["model"] == model and event["route_candidates"][0]["verdict"] == "winner"
