"""The routing simulation (bench/routing_sim) on small mixes: the gateway's own router beats random
scheduling on rejected attempts, upstream 429s, cost and money lost; its integrity flags come from
the simulated probes (a provider made dishonest only in the fleet's profiles is caught, an offering
joining mid-run is not routed to until its probes are in), and it keeps its lead on cost and money
lost over least-latency and the LiteLLM-style router on the dishonest and overload variants."""

from __future__ import annotations

import dataclasses

from bench.routing_sim import workload
from bench.routing_sim.probes import INTEGRITY_S, Evaluation
from bench.routing_sim.report import composite
from bench.routing_sim.run import bench_catalog, compare
from bench.routing_sim.variants import BY_NAME
from bench.routing_sim.world import World

STRONG = ("least-latency", "litellm-latency")


def test_small_mix_tokenway_balanced_beats_random_on_rejections_and_cost():
    requests = workload.build(3000, seed=3, duration_s=60.0)  # a busy minute: bursts reach the small RPM/TPM limits
    results = {tally.name: tally.row() for tally, _ in compare(requests, ["random", "tokenway:balanced"], seed=3)}
    random, ours = results["random"], results["tokenway:balanced"]
    assert random["429s"] > 0 and random["lost_usd"] > 0  # the mix does reach the limits and the reseller
    assert ours["first_try_failed"] < random["first_try_failed"]
    assert ours["429s"] < random["429s"]
    assert ours["success"] >= random["success"]
    assert ours["cost_per_m"] < random["cost_per_m"]
    assert ours["lost_usd"] == 0.0


def test_integrity_flags_come_from_the_simulated_probes_and_a_joining_offering_waits_for_them():
    variant = BY_NAME["dishonest"]  # SiliconFlow over-reports only in the fleet's profiles; the reseller joins at 2 min
    world = World(seed=variant.seed, incidents=(), dishonesty=variant.dishonesty)
    catalog = bench_catalog()
    evaluation = Evaluation(world, list(catalog.offerings), variant.joins)
    by_id = {o.offering_id: o for o in catalog.offerings}
    flagged = {by_id[i].provider: e["flags"] for i, e in evaluation.integrity.items() if e["flags"]}
    assert set(flagged) == {"siliconflow"}  # the reseller is not in the catalog yet: nothing known about it
    assert flagged["siliconflow"] == ("token_overcount",)
    assert all(not o.integrity_pending for o in evaluation.catalog(catalog).offerings)

    world.clock.t = variant.joins["bargain-cloud"]
    assert evaluation.changed()
    pending = {o.provider for o in evaluation.catalog(catalog).offerings if o.integrity_pending}
    assert pending == {"bargain-cloud"}  # joined, its probes not run yet
    world.clock.t += INTEGRITY_S
    assert evaluation.changed()
    assert not any(o.integrity_pending for o in evaluation.catalog(catalog).offerings)
    reseller = [e["flags"] for i, e in evaluation.integrity.items() if by_id[i].provider == "bargain-cloud"]
    assert reseller and all(set(f) == {"token_overcount", "price_mismatch", "degraded_quality"} for f in reseller)


def _rows(name: str, n: int) -> dict[str, tuple[dict[str, float], int]]:
    variant = BY_NAME[name]
    requests = workload.build(n, seed=variant.seed, duration_s=variant.duration_s, share=variant.share)
    routers = ["random", *STRONG, "tokenway:balanced"]
    return {t.name: (t.row(), t.requests) for t, _ in compare(requests, routers, variant=variant)}


def test_dishonest_and_overload_variants_tokenway_leads_on_cost_money_lost_and_good_answers_per_dollar():
    for name, n in (("dishonest", 800), ("overload", 1000)):
        rows = _rows(name, n)
        ours, _ = rows["tokenway:balanced"]
        assert ours["lost_usd"] == 0.0, name
        assert rows["random"][0]["lost_usd"] > 0, name  # the dishonest offerings do get traffic from a blind router
        for base in STRONG:
            theirs, _ = rows[base]
            assert ours["cost_per_m"] < theirs["cost_per_m"], (name, base)
            assert ours["429s"] <= theirs["429s"], (name, base)
            assert composite(ours, n) > composite(theirs, n), (name, base)
        assert ours["success"] >= max(rows[b][0]["success"] for b in STRONG), name


def test_a_joining_offering_is_not_routed_to_before_its_integrity_probes():
    variant = dataclasses.replace(BY_NAME["dishonest"], dishonesty={})  # only the reseller, joining at 2 min
    requests = workload.build(600, seed=variant.seed, duration_s=240.0)
    (ours, _), (blind, _) = compare(requests, ["tokenway:balanced", "least-latency"], variant=variant)
    assert blind.served_by["bargain-cloud"] > 0  # a latency router takes it as soon as it appears
    assert ours.served_by["bargain-cloud"] == 0 and ours.lost_to_dishonest_micros == 0
