"""A day of probe history for the offerings under test, from the simulator's own ground truth (its
profiles' medians and the network distance of each probe region), written into the running stack's
database by tests/recovery/history_writer.py."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import orjson
import requests

from contracts.snapshot import OfferingSnapshot
from tests.deployed.conftest import REGIONS, ROOT, Stack

PROMPT_K_TOKENS = 1.0  # a performance probe's ~1k-token input: one unit of the profile's prefill per 1k


def _sim(stack: Stack, path: str) -> dict[str, Any]:
    response = requests.get(f"http://127.0.0.1:{stack.sim_port}{path}", timeout=10)
    response.raise_for_status()
    data: dict[str, Any] = response.json()
    return data


def history_spec(stack: Stack, offerings: list[OfferingSnapshot]) -> list[dict[str, Any]]:
    """What a probe from each region measures of each offering: the profile's median TTFT and tokens/s,
    plus the region's round trip to the provider's site and the prompt's prefill (docs/sim.md)."""
    fleet, network = _sim(stack, "/_sim/profiles"), _sim(stack, "/_sim/network")
    scale = float(fleet["time_scale"])
    spec = []
    for offering in offerings:
        view = fleet["providers"][offering.provider]["offerings"][offering.model]
        site = network["sites"].get(offering.provider)
        for region in REGIONS.split(","):
            rtt = network["matrix"][region][site][0] if site else 0.0
            ttft = view["expected"]["ttft_ms"] + view["perf"]["prefill_ms_per_1k"] * PROMPT_K_TOKENS
            spec.append(
                {
                    "offering_id": offering.offering_id,
                    "region": region,
                    "ttft_ms": ttft * scale + rtt,
                    "sigma": view["perf"]["ttft_sigma"],
                    "tps": view["expected"]["tokens_per_s"] / scale,
                }
            )
    return spec


def seed_history(stack: Stack, offerings: list[OfferingSnapshot]) -> int:
    """Write the day into the stack's database (its statistics pick it up at their next refresh)."""
    spec = orjson.dumps(history_spec(stack, offerings)).decode()
    code = f"from tests.recovery.history_writer import write; print(write({spec!r}))"
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env=stack.env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return int(done.stdout.strip().splitlines()[-1])
