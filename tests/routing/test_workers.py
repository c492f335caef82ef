"""``python -m routing --workers 2``: one port, two worker processes, each with its own lifespan (Redis
connection, HTTP session, key cache, refreshers, spool segment); calls through either are admitted,
answered, accounted once and their holds settled; stopping the supervisor stops the workers."""

from __future__ import annotations

import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psutil
import pytest
import redis
import requests

from contracts import redis_keys as rk
from devtools.ports import free_port, wait_for_port
from devtools.processes import spawn, stop
from sim.server import SimHandle
from tests.catalogs import sim_catalog
from tests.routing.harness import make_tenant, usage_events
from tests.waiting import wait_until

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parents[2]
CALLS = 16
WORKERS = 2


def _chat(base_url: str, key: str) -> requests.Response:
    body: dict[str, Any] = {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 20}
    return requests.post(
        f"{base_url}/v1/chat/completions",
        json=body,
        timeout=30,
        headers={"authorization": f"Bearer {key}", "connection": "close"},
    )


def test_two_workers_behind_one_port_serve_and_account_every_call(
    sim: SimHandle, redis_client: redis.Redis, tmp_path: Path
) -> None:
    redis_client.set(rk.CATALOG_SNAPSHOT, sim_catalog(sim.provider_url).to_json())
    redis_client.incr(rk.CATALOG_VERSION)
    tenant = make_tenant(redis_client, balance=10**9)
    port = free_port()
    env = {**os.environ, "TOKENWAY_SPOOL_DIR": str(tmp_path / "spool"), "PYTHONPATH": f"{ROOT}:{ROOT / 'platform'}"}
    supervisor = spawn(
        [sys.executable, "-m", "routing", "--port", str(port), "--workers", str(WORKERS)], env=env, cwd=ROOT
    )
    try:
        wait_for_port(port, timeout=60)
        wait_until(lambda: len(_workers(supervisor.pid)) == WORKERS, timeout=30, message="two worker processes")
        base_url = f"http://127.0.0.1:{port}"
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda _: _chat(base_url, tenant.key), range(CALLS)))
        assert [a.status_code for a in answers] == [200] * CALLS
        ids = {a.headers["x-request-id"] for a in answers}
        assert len(ids) == CALLS

        def events() -> list[dict[str, Any]]:
            return usage_events(redis_client)

        wait_until(lambda: {e["request_id"] for e in events()} >= ids, timeout=10, message="every call's usage event")
        mine = [e for e in events() if e["request_id"] in ids]
        assert len(mine) == CALLS  # once each, whichever worker served it
        assert all(e["status"] == "ok" and e["charge_micros"] > 0 for e in mine)
        charged = sum(int(e["charge_micros"]) for e in mine)
        wait_until(
            lambda: int(redis_client.get(rk.tenant_available(tenant.record.tenant_id)) or 0) == 10**9 - charged,
            timeout=10,
            message="every hold settled to its charge",
        )
        workers = _workers(supervisor.pid)
    finally:
        stop(supervisor, timeout=20)
    assert supervisor.returncode is not None
    wait_until(
        lambda: not any(w.is_running() and w.status() != psutil.STATUS_ZOMBIE for w in workers),
        timeout=10,
        message="workers gone with the supervisor",
    )


def _workers(pid: int) -> list[psutil.Process]:
    """uvicorn's worker processes (spawned through multiprocessing), not its resource tracker."""
    children = psutil.Process(pid).children()
    return [p for p in children if "spawn_main" in " ".join(p.cmdline())]
