"""Stream end states priced against what the provider bills: booked provider cost vs the simulator's own bill.

Real path: a bare HTTP/1.1 client streams chat completions through the real gateway (uvicorn, in a thread)
to the simulated fleet (in a thread, OpenAI's gpt-4.1-mini, latency scaled by --time-scale); the usage
event is read from Redis, the provider's bill from the simulator's request log (``billed_cost_micros``).
Requests run one at a time. Not on the path: metering's ingestion (the event's figures are what it books;
tests/metering/test_end_states_gateway.py checks the journal equals them).

Per end state: the simulator's bill, the provider cost booked, the largest per-request difference, what the
tenant was charged, and for an abandoned stream the output the client had received against what was booked,
and the time from the client's hang-up to the usage event (the upstream read to its end, routing/handoff/drain.py).

    python -m devtools.devstack test -- python -m bench.end_states_bench [--n 20] [--time-scale 0.05]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import redis
import requests

from contracts import redis_keys as rk
from routing.app import make_gateway_app
from sim.server import SimHandle, start_in_thread
from tests.catalogs import sim_catalog
from tests.routing.conftest import calm_profiles
from tests.routing.harness import ServerThread, Tenant, make_tenant, publish_catalog, test_config

MSG = [{"role": "user", "content": "Tell me a long story about caches."}]
BODY = {"model": "gpt-4.1-mini", "messages": MSG, "max_tokens": 400, "provider": {"only": ["openai"]}}


def _stream(port: int, key: str, *, hang_up_after: int | None) -> tuple[int, float]:
    """(content events received, monotonic time of the hang-up or the end)."""
    payload = json.dumps({**BODY, "stream": True}).encode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    head = f"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {key}\r\n"
    sock.sendall(f"{head}content-type: application/json\r\ncontent-length: {len(payload)}\r\n\r\n".encode() + payload)
    received = b""
    while True:
        chunk = sock.recv(65536)
        received += chunk
        if not chunk or b"data: [DONE]" in received or b'"error"' in received:
            break
        if hang_up_after is not None and received.count(b'"content":"') >= hang_up_after:
            break
    sock.close()
    return received.count(b'"content":"'), time.monotonic()


def _event(tenant: Tenant, n: int, timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        events = tenant.events()
        if len(events) >= n:
            return events[n - 1]
        time.sleep(0.002)
    raise TimeoutError("no usage event")


def _fault(sim: SimHandle, **rule: Any) -> None:
    requests.post(f"{sim.base_url}/_sim/faults", json={"provider": "openai", "count": 1, **rule}, timeout=5)


def _billed(sim: SimHandle) -> dict[str, Any]:
    entry = requests.get(f"{sim.base_url}/_sim/requests?provider=openai&limit=1", timeout=5).json()["requests"][0]
    return entry["sim"]


def run(n: int, time_scale: float) -> list[dict[str, Any]]:
    folder = Path(tempfile.mkdtemp(prefix="end-states-bench-"))
    sim = start_in_thread(seed=11, time_scale=time_scale, profiles=calm_profiles(folder))
    client = redis.Redis.from_url(os.environ["REDIS_URL"])
    client.delete(rk.USAGE_STREAM)
    publish_catalog(client, sim_catalog(sim.provider_url))
    server = ServerThread(make_gateway_app(test_config(idle_timeout_s=5.0, deadline_s=60.0)))
    deadline = time.monotonic() + 10
    while not server.gateway.catalog.by_model and time.monotonic() < deadline:  # its first catalog refresh
        time.sleep(0.01)
    tenant = make_tenant(client)
    rows: list[dict[str, Any]] = []
    count = 0
    try:
        for state, hang_up, fault in (
            ("completed", None, None),
            ("client_cancelled", 3, {"kind": "stall_mid_stream", "stall_s": 20}),
            ("upstream_cut", None, {"kind": "stream_cut"}),
        ):
            samples = []
            for _ in range(n):
                if fault:
                    _fault(sim, **fault)
                received, ended = _stream(server.port, tenant.key, hang_up_after=hang_up)
                count += 1
                event = _event(tenant, count)
                samples.append((event, _billed(sim), received, (time.monotonic() - ended) * 1000))
            rows.append(_row(state, samples))
    finally:
        server.stop()
        sim.stop()
        client.close()
    return rows


def _row(state: str, samples: list[tuple[dict[str, Any], dict[str, Any], int, float]]) -> dict[str, Any]:
    booked = [e["cost_micros"] for e, _, _, _ in samples]
    billed = [s["billed_cost_micros"] for _, s, _, _ in samples]
    lags = sorted(lag for *_, lag in samples)
    return {
        "state": state,
        "seen": sorted({e["end_state"] for e, *_ in samples}),
        "n": len(samples),
        "billed": sum(billed),
        "booked": sum(booked),
        "max_diff": max(abs(a - b) for a, b in zip(booked, billed, strict=True)),
        "charged": sum(e["charge_micros"] for e, *_ in samples),
        "out_relayed": statistics.mean(r for *_, r, _ in samples),
        "out_booked": statistics.mean(e["tokens"]["output"] for e, *_ in samples),
        "out_billed": statistics.mean(s["reported_usage"]["output"] for _, s, _, _ in samples),
        "lag_p50": lags[len(lags) // 2],
        "lag_max": lags[-1],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--time-scale", type=float, default=0.05)
    args = parser.parse_args(argv)
    rows = run(args.n, args.time_scale)
    print(
        f"end states bench: {args.n} streams per state, gpt-4.1-mini on the simulated openai, time scale {args.time_scale}"
    )
    print(
        f"{'end state':<18}{'n':>4}{'sim billed µ$':>15}{'booked µ$':>11}{'max |diff|':>11}{'charged µ$':>12}"
        f"{'out relayed':>13}{'out booked':>12}{'out billed':>12}{'event lag p50/max ms':>22}"
    )
    for r in rows:
        assert r["seen"] == [r["state"]], r["seen"]
        print(
            f"{r['state']:<18}{r['n']:>4}{r['billed']:>15}{r['booked']:>11}{r['max_diff']:>11}{r['charged']:>12}"
            f"{r['out_relayed']:>13.1f}{r['out_booked']:>12.1f}{r['out_billed']:>12.1f}"
            f"{r['lag_p50']:>13.0f}/{r['lag_max']:.0f}"
        )
    print("out relayed = content chunks the client received; out booked/billed = output tokens.")
    print("metering's ingestion is not on this path (its journal books the event's figures; see the tests).")
    print(
        "reproduce: python -m devtools.devstack test -- python -m bench.end_states_bench "
        f"--n {args.n} --time-scale {args.time_scale}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
