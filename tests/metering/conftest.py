"""Metering fixtures: usage events, keys with plaintext, the meter emulator and localstripe on loopback."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import requests

from contracts.pricing import charge_micros
from contracts.redis_keys import usage_shard, usage_shard_count, usage_stream
from contracts.usage import Prices, Tokens, UsageEvent, cost_micros
from devtools.ports import free_port
from devtools.ports import wait_for_port as wait_port
from publishing.catalog_snapshot import publish_catalog
from sim.server import SimHandle, start_in_thread
from tests.catalogs import apply_catalog_file
from tests.routing import harness
from tests.routing.conftest import TIME_SCALE, calm_profiles
from tests.routing.harness import ServerThread
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
PRICES = Prices(input=2_000_000, output=8_000_000, cache_read=500_000, cache_write_5m=2_500_000, version=3)


def tenant_stream(tenant_id: int) -> str:
    """The usage shard stream a gateway writes this tenant's events to (TOKENWAY_USAGE_SHARDS)."""
    return usage_stream(usage_shard(tenant_id, usage_shard_count(os.environ)))


def make_event(tenant_id: int, key_id: int = 1, *, markup_bps: int = 0, **overrides) -> UsageEvent:
    tokens = overrides.pop("tokens", Tokens(input_uncached=1200, cache_read=800, output=300, reasoning=50))
    prices = overrides.pop("prices", PRICES)
    byok = overrides.pop("byok", False)
    cost = overrides.pop("cost_micros", cost_micros(tokens, prices))
    charge = overrides.pop("charge_micros", charge_micros(cost_micros=cost, markup_bps=markup_bps, byok=byok))
    now = time.time()
    fields: dict[str, Any] = dict(  # noqa: C408 - keyword form reads like the event
        request_id=overrides.pop("request_id", f"req_{uuid.uuid4().hex}"),
        tenant_id=tenant_id,
        key_id=key_id,
        model="deepseek-v4-flash",
        offering_id=7,
        provider="deepseek",
        region="beijing",
        route_mode="balanced",
        route_reason="cheapest healthy",
        tokens=tokens,
        usage_source="provider",
        prices=prices,
        cost_micros=cost,
        charge_micros=charge,
        status="ok",
        http_status=200,
        stream=True,
        byok=byok,
        started_at=now - 1.5,
        ttft_ms=220.0,
        total_ms=1500.0,
        finished_at=now,
    )
    fields.update(overrides)
    return UsageEvent(**fields)


def spawn(args: list[str], *, env: dict[str, str] | None = None, log: Path | None = None) -> subprocess.Popen[bytes]:
    out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115
    return subprocess.Popen(args, cwd=ROOT, env={**os.environ, **(env or {})}, stdout=out, stderr=subprocess.STDOUT)


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def meter_emulator(settings) -> Iterator[str]:
    port = free_port()
    process = spawn([sys.executable, "-m", "fakes.stripe_meter", "--port", str(port)])
    wait_port(port)
    base = f"http://127.0.0.1:{port}"
    settings.STRIPE_METER_API_BASE = base
    settings.STRIPE_API_KEY = "sk_test_metering"
    from metering.stripe.client import clients_reset

    clients_reset()
    yield base
    clients_reset()
    stop(process)


@pytest.fixture
def localstripe(settings) -> Iterator[str]:
    port = free_port()
    process = spawn([sys.executable, "-m", "fakes.localstripe_server", "--port", str(port), "--from-scratch"])
    wait_port(port)
    base = f"http://127.0.0.1:{port}"
    settings.STRIPE_API_BASE = base
    settings.STRIPE_API_KEY = "sk_test_metering"
    from metering.stripe.client import clients_reset

    clients_reset()
    yield base
    clients_reset()
    stop(process)


def emulator_totals(base: str) -> dict[str, Any]:
    body: dict[str, Any] = requests.get(f"{base}/_emulator/totals", timeout=5).json()
    return body


# --- The real gateway before the simulated fleet, for through-the-gateway billing tests -----------------


@pytest.fixture(scope="module")
def billing_fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimHandle]:
    handle = start_in_thread(seed=21, time_scale=TIME_SCALE, profiles=calm_profiles(tmp_path_factory.mktemp("sim")))
    yield handle
    handle.stop()


@pytest.fixture(scope="module")
def billing_gateway_thread(billing_fleet: SimHandle) -> Iterator[ServerThread]:
    from routing.app import make_gateway_app

    server = ServerThread(make_gateway_app(harness.test_config()))
    yield server
    server.stop()


@pytest.fixture
def billing_gateway(
    billing_gateway_thread: ServerThread, billing_fleet: SimHandle, redis_client: redis.Redis
) -> ServerThread:
    """The real gateway before the simulated fleet (calm profiles), the demo catalog in the database, published."""
    apply_catalog_file(ROOT / "demo" / "catalog.yaml", sim_base_url=billing_fleet.base_url)
    version = publish_catalog()
    catalog = billing_gateway_thread.gateway.catalog
    wait_until(
        lambda: catalog.catalog and catalog.catalog.version == version,
        timeout=5,
        message="the gateway sees the catalog",
    )
    requests.post(f"{billing_fleet.base_url}/_sim/reset", timeout=5)
    return billing_gateway_thread
