"""Network distance: the caller's region adds its round trip to each provider's first byte."""

from __future__ import annotations

from sim.draws import Draws
from sim.network import DEFAULT_NETWORK, load_network, network_from_dict

URL = "/{provider}/v1/chat/completions"
BODY = {"model": "deepseek-v3.2", "messages": [{"role": "user", "content": "How far is it?"}], "max_tokens": 8}


def _send(http, region: str | None, provider: str = "deepseek") -> dict:
    """The same body after a reset, so the provider's own draws are the same for every caller."""
    http.post("/_sim/reset").raise_for_status()
    headers = {"x-tokenway-region": region} if region else {}
    http.post(URL.format(provider=provider), json=BODY, headers=headers).raise_for_status()
    [entry] = http.get("/_sim/requests", params={"provider": provider, "limit": 1}).json()["requests"]
    return entry["sim"]


def test_each_region_adds_its_own_round_trip_to_the_first_byte(http):
    network = load_network(DEFAULT_NETWORK)
    base = _send(http, None)
    assert base["network"] is None  # no header: no distance (tests, benchmarks)
    for region in ("beijing", "shanghai", "shenzhen", "chengdu"):
        truth = _send(http, region)
        hop = truth["network"]
        link = network.matrix[region][network.sites["deepseek"]]
        assert hop["region"] == region and hop["site"] == "hangzhou" and hop["rtt_ms"] == link.rtt_ms
        assert abs(truth["timing"]["ttft_ms"] - base["timing"]["ttft_ms"] - hop["delay_ms"]) < 0.01
        if not hop["lost"]:
            assert abs(hop["delay_ms"] - link.rtt_ms) <= 6 * link.jitter_ms + 0.01


def test_unknown_region_or_provider_site_travels_no_distance(http):
    assert _send(http, "atlantis")["network"] is None
    network = load_network(DEFAULT_NETWORK)
    assert network.hop("beijing", "no-such-provider", Draws(1)) is None


def test_the_matrix_is_served_and_every_region_reaches_every_site(http):
    served = http.get("/_sim/network").json()
    network = load_network(DEFAULT_NETWORK)
    assert served == network.as_dict()
    sites = set(network.sites.values())
    for region, links in network.matrix.items():
        assert sites <= set(links), region
    assert network.matrix["beijing"]["beijing"].rtt_ms < network.matrix["chengdu"]["beijing"].rtt_ms
    assert network.matrix["shanghai"]["us-west"].rtt_ms < network.matrix["chengdu"]["us-west"].rtt_ms


def test_a_lost_packet_costs_a_retransmission_and_loss_happens_at_its_rate():
    lossy = network_from_dict(
        {"sites": {"p": "far"}, "matrix": {"r": {"far": [150, 0, 1.0]}, "q": {"far": [10, 0, 0.1]}}, "min_rto_ms": 200}
    )
    hop = lossy.hop("r", "p", Draws(3))
    assert hop is not None and hop.lost and hop.delay_ms == 150 + 300  # 2 x RTT beats the 200 ms floor
    hops = [lossy.hop("q", "p", Draws(seed)) for seed in range(4000)]
    lost = [h for h in hops if h is not None and h.lost]
    assert 0.08 < len(lost) / len(hops) < 0.12
    assert all(h.delay_ms == 10 + 200 for h in lost)  # the floor beats 2 x RTT
