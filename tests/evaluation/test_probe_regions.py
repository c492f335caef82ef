"""Probes from different regions see different first-byte times: each worker names its region to the
provider (contracts.regions) and the simulated network adds that region's round trip (sim/network.yaml)."""

from __future__ import annotations

import asyncio
import statistics
from pathlib import Path

import requests
import yaml

from evaluation.runner import Job, run_jobs
from sim.network import load_network
from sim.profiles import DEFAULT_PROFILES
from sim.server import start_in_thread
from tests.catalogs import sim_catalog
from tests.evaluation.conftest import find

TIME_SCALE = 0.5  # a 70 ms round-trip difference is 35 ms of real time
RUNS = 12  # performance probes per region (medians: a lost packet in one run does not move them)


def _steady_profiles(folder: Path) -> Path:
    """sim/profiles.yaml with a constant server-side TTFT for OpenAI: what differs is the network."""
    data = yaml.safe_load(Path(DEFAULT_PROFILES).read_text())
    openai = data["providers"]["openai"]
    openai["perf"] = {**openai.get("perf", {}), "ttft_sigma": 0.0, "tokens_per_s": 5000, "prefill_ms_per_1k": 0}
    openai.pop("faults", None)
    openai.pop("incidents", None)
    path = folder / "profiles.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


ROUNDS = 3  # the regions take turns in small concurrent batches, so a busy machine slows both alike


def _both(offering_id: int, by_id, regions: tuple[str, ...]) -> list[list]:
    results: list[list] = [[] for _ in regions]
    batch = [Job(offering_id, "performance")] * (RUNS // ROUNDS)
    for _ in range(ROUNDS):
        for index, region in enumerate(regions):
            results[index] += asyncio.run(run_jobs(batch, by_id, region=region))
    return results


def _median_ttft_sim_ms(results) -> float:
    ttfts = [o.ttft_ms for _, outcomes in results for o in outcomes if o.variant == "1k" and o.ok]
    assert len(ttfts) == RUNS
    return statistics.median(ttfts) / TIME_SCALE


def test_per_region_probe_ttft_differs_by_the_matrix_round_trip(tmp_path):
    network = load_network()
    near, far = "shanghai", "chengdu"  # to OpenAI's US-West site: 140 ms and 210 ms
    expected = network.matrix[far]["us-west"].rtt_ms - network.matrix[near]["us-west"].rtt_ms
    with start_in_thread(seed=11, time_scale=TIME_SCALE, profiles=_steady_profiles(tmp_path)) as sim:
        catalog = sim_catalog(sim.base_url)
        by_id = {o.offering_id: o for o in catalog.offerings}
        offering_id = find(catalog, "openai", "gpt-4.1-mini").offering_id
        results = _both(offering_id, by_id, (near, far))
        log = requests.get(f"{sim.base_url}/_sim/requests", params={"provider": "openai", "limit": 500}, timeout=5)
    seen = {region: _median_ttft_sim_ms(found) for region, found in zip((near, far), results, strict=True)}
    hops = [entry["sim"]["network"] for entry in log.json()["requests"]]
    delay = {r: statistics.median(h["delay_ms"] for h in hops if h["region"] == r) for r in (near, far)}
    assert abs(delay[far] - delay[near] - expected) < expected / 2, delay  # this run's draws, about the matrix
    measured = seen[far] - seen[near]
    assert abs(measured - (delay[far] - delay[near])) < expected / 2, (seen, delay)  # what the probes saw
