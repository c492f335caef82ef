"""One simulated fleet per test module, on a free loopback port, reset before every test."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import httpx2
import openai
import pytest

from sim.server import SimHandle, start_in_thread

TIME_SCALE = 0.001  # 1 sim second = 1 ms: profiles' latencies stay visible but tiny


@pytest.fixture(scope="module")
def fleet_handle() -> Iterator[SimHandle]:
    handle = start_in_thread(port=0, seed=7, time_scale=TIME_SCALE)
    yield handle
    handle.stop()


@pytest.fixture
def sim(fleet_handle: SimHandle) -> Iterator[SimHandle]:
    with httpx2.Client() as client:
        client.post(f"{fleet_handle.base_url}/_sim/reset").raise_for_status()
    yield fleet_handle


@pytest.fixture
def http(sim: SimHandle) -> Iterator[httpx2.Client]:
    with httpx2.Client(base_url=sim.base_url, timeout=10) as client:
        yield client


@pytest.fixture
def oai(sim: SimHandle):
    def make(provider: str) -> openai.OpenAI:
        return openai.OpenAI(base_url=sim.provider_url(provider), api_key="sk-sim", max_retries=0, timeout=10)

    return make


@pytest.fixture
def claude(sim: SimHandle):
    def make(provider: str = "anthropic") -> anthropic.Anthropic:
        return anthropic.Anthropic(
            base_url=f"{sim.base_url}/{provider}", api_key="sk-ant-sim", max_retries=0, timeout=10
        )

    return make


def inject(http: httpx2.Client, **rule) -> None:
    http.post("/_sim/faults", json=rule).raise_for_status()


def sse_events(text: str) -> list[str]:
    return [line.removeprefix("event: ") for line in text.splitlines() if line.startswith("event: ")]
