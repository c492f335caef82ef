"""The routing simulation (bench/routing_sim) runs on a small mix, and the gateway's own router beats
random scheduling there on rejected attempts, upstream 429s, cost and money lost to the dishonest reseller."""

from __future__ import annotations

from bench.routing_sim import workload
from bench.routing_sim.run import compare


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
