"""Fixtures: one simulated fleet and one gateway (uvicorn, real Redis) per session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
import redis
import requests as httpx

from contracts.snapshot import CatalogSnapshot
from sim.server import SimHandle, start_in_thread
from tests.catalogs import sim_catalog
from tests.routing.harness import ServerThread, Tenant, make_tenant, publish_catalog, test_config
from tests.waiting import wait_until

TIME_SCALE = 0.005  # sim seconds -> real: a 700 ms TTFT takes 3.5 ms


def calm_profiles(folder: Path) -> Path:
    """sim/profiles.yaml without random faults and incidents: the tests inject the faults they test."""
    import yaml

    from sim.profiles import DEFAULT_PROFILES

    def calm(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: calm(v) for k, v in node.items() if k not in ("faults", "incidents")}
        return node

    path = folder / "profiles.yaml"
    path.write_text(yaml.safe_dump(calm(yaml.safe_load(Path(DEFAULT_PROFILES).read_text()))))
    return path


@pytest.fixture(scope="session")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimHandle]:
    handle = start_in_thread(seed=7, time_scale=TIME_SCALE, profiles=calm_profiles(tmp_path_factory.mktemp("sim")))
    yield handle
    handle.stop()


def data_redis() -> redis.Redis:
    """A client of the data Redis, for a fixture wider than ``redis_client`` (which is per test)."""
    import os

    from foundation.redis_client import client_for, cluster_mode

    url = os.environ["REDIS_URL"]  # a node of a Redis Cluster in the cluster pass (make test-cluster)
    return client_for(url, cluster=cluster_mode(url, os.environ.get("TOKENWAY_REDIS_CLUSTER", "")), timeout_s=None)


@pytest.fixture(scope="session")
def gateway_server(sim: SimHandle) -> Iterator[ServerThread]:
    from routing.app import make_gateway_app

    client = data_redis()
    publish_catalog(client, sim_catalog(sim.provider_url))
    server = ServerThread(make_gateway_app(test_config()))
    yield server
    server.stop()
    client.close()


@pytest.fixture
def gateway(gateway_server: ServerThread, sim: SimHandle, redis_client: redis.Redis) -> ServerThread:
    """Fresh Redis (flushed by redis_client), catalog republished, breakers closed, sim reset."""
    return ready_gateway(gateway_server, sim, redis_client)


def ready_gateway(server: ServerThread, sim: SimHandle, client: redis.Redis) -> ServerThread:
    """``server`` on a flushed Redis: catalog republished, breakers closed, sim reset."""
    catalog = sim_catalog(sim.provider_url)
    publish_catalog(client, catalog)
    server.gateway.health.reset()
    server.gateway.limits.reset()  # learned limits: another test's lowered RPM is not this test's
    httpx.post(f"{sim.base_url}/_sim/reset")
    httpx.delete(f"{sim.base_url}/_sim/faults", timeout=5)
    _wait_catalog(server, catalog)
    return server


def _wait_catalog(server: ServerThread, catalog: CatalogSnapshot) -> None:
    """The gateway serves this test's catalog, not the one an earlier test left (a version bump reloads it)."""
    published = catalog.to_json()
    state = server.gateway.catalog
    wait_until(
        lambda: state.catalog is not None and state.catalog.to_json() == published,
        timeout=15,
        interval=0.01,
        message="the gateway loads the published catalog",
    )


@pytest.fixture
def tenant(gateway: ServerThread, redis_client: redis.Redis) -> Tenant:
    return make_tenant(redis_client)


@pytest.fixture
def oai(gateway: ServerThread, tenant: Tenant) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{gateway.base_url}/v1", api_key=tenant.key, max_retries=0, timeout=20)


@pytest.fixture
def claude(gateway: ServerThread, tenant: Tenant) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=gateway.base_url, api_key=tenant.key, max_retries=0, timeout=20)


def sim_requests(sim: SimHandle, provider: str, limit: int = 10) -> list[dict[str, Any]]:
    """What the simulated provider received, newest first (GET /_sim/requests), header names lower-cased."""
    response = httpx.get(f"{sim.base_url}/_sim/requests?provider={provider}&limit={limit}", timeout=5)
    response.raise_for_status()
    return [dict(e, headers={k.lower(): v for k, v in e["headers"].items()}) for e in response.json()["requests"]]


def add_fault(sim: SimHandle, **rule: Any) -> None:
    response = httpx.post(f"{sim.base_url}/_sim/faults", json=rule)
    assert response.status_code == 201, response.text


@pytest.fixture
def patient_gateway(sim: SimHandle, redis_client: redis.Redis) -> Iterator[ServerThread]:
    """A gateway of its own whose idle gap (5 s) outlasts a provider's pause mid-stream (tests/routing/open_stream.py)."""
    from routing.app import make_gateway_app

    catalog = sim_catalog(sim.provider_url)
    publish_catalog(redis_client, catalog)
    httpx.post(f"{sim.base_url}/_sim/reset", timeout=5)
    httpx.delete(f"{sim.base_url}/_sim/faults", timeout=5)
    server = ServerThread(make_gateway_app(test_config(idle_timeout_s=5.0, deadline_s=30.0)))
    _wait_catalog(server, catalog)
    yield server
    server.stop()
