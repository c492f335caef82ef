"""Billing latency end to end, through the real gateway: request end -> ledger, and -> Stripe's meter.

Real path: an aiohttp client sends chat completions at --rate for --duration seconds (open loop: requests
are started on schedule whatever the answers do) with a postpaid tenant's key to the gateway
(``python -m routing``, uvicorn), which routes them to the simulated fleet (``python -m sim``, OpenRouter's
gemini-2.5-flash; by default it answers at once, --time-scale gives it latency) and hands each usage event to Redis; ``manage.py
consume_usage`` writes usage rows, ledger journals, balances and meter events (one transaction); ``manage.py
push_meter_events --loop 1`` sends them to the Stripe meter emulator. Every process is separate, on loopback.

Measured per request, from the moment the client has the whole answer:
- ledger: until its usage row is visible in PostgreSQL (committed with its journal and the tenant's balance),
  seen by a poller every --poll-ms (so up to that much is added);
- Stripe: until the meter emulator accepted its meter event (the emulator's own timestamp).

    make bench
    python -m devtools.devstack test -- python -m bench.billing_e2e_bench [--rate 200] [--duration 60]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "platform")]
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tokenway.settings")

PROVIDER, MODEL = "openrouter", "gemini-2.5-flash"
TARGET_LEDGER_P99_S, TARGET_METER_P99_S = 2.0, 10.0
SETTLE_S = 60  # after the load: how long the ledger and the meter may take to catch up
MAX_IN_FLIGHT = 2000  # open loop, but bounded: a stalled gateway must not exhaust the client's sockets


@dataclass
class Load:
    ended: dict[str, float] = field(default_factory=dict)  # request id -> client had the whole answer
    latency: list[float] = field(default_factory=list)  # seconds from sending to the whole answer
    start_window: float = 0.0  # seconds from the first request started to the last
    errors: dict[str, int] = field(default_factory=dict)
    sent: int = 0
    late_starts: int = 0  # requests started more than 50 ms behind schedule (the client could not keep up)


def _pct(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * pct / 100))] if ordered else float("nan")


async def _one(session: Any, url: str, key: str, n: int, load: Load) -> None:
    import aiohttp

    body = {"model": MODEL, "max_tokens": 16, "provider": {"only": [PROVIDER]},
            "messages": [{"role": "user", "content": f"Bench request {n}: say something short."}]}  # fmt: skip
    began = time.time()
    try:
        async with session.post(url, json=body, headers={"authorization": f"Bearer {key}"}) as response:
            await response.read()
            if response.status == 200:
                ended = load.ended[response.headers["x-request-id"]] = time.time()
                load.latency.append(ended - began)
            else:
                load.errors[str(response.status)] = load.errors.get(str(response.status), 0) + 1
    except (TimeoutError, OSError, aiohttp.ClientError) as exc:
        load.errors[type(exc).__name__] = load.errors.get(type(exc).__name__, 0) + 1


async def run_load(url: str, key: str, rate: float, duration: float) -> Load:
    import aiohttp

    load = Load()
    timeout = aiohttp.ClientTimeout(total=30)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=MAX_IN_FLIGHT), timeout=timeout) as s:
        tasks: set[asyncio.Task[None]] = set()
        start = time.monotonic()
        total = int(rate * duration)
        for n in range(total):
            due = start + n / rate
            delay = due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            elif delay < -0.05:
                load.late_starts += 1
            task = asyncio.create_task(_one(s, url, key, n, load))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            load.sent += 1
        load.start_window = time.monotonic() - start
        await asyncio.gather(*tasks)
    return load


def _run(load: Coroutine[Any, Any, Load]) -> Load:
    """The client's loop: uvloop when installed (as the gateway and the simulator use)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(load)
    return uvloop.run(load)


class LedgerPoller(threading.Thread):
    """Stamps each usage row the moment it is visible (committed), polling by primary key."""

    def __init__(self, poll_s: float) -> None:
        super().__init__(daemon=True)
        self.poll_s, self.stop = poll_s, threading.Event()
        self.seen: dict[str, float] = {}

    def run(self) -> None:
        from django.db import connection

        last = 0
        try:
            while not self.stop.is_set():
                with connection.cursor() as cursor:
                    cursor.execute("SELECT id, request_id FROM metering_usagerecord WHERE id > %s ORDER BY id", [last])
                    rows = cursor.fetchall()
                now = time.time()
                for row_id, request_id in rows:
                    self.seen.setdefault(request_id, now)
                    last = max(last, row_id)
                self.stop.wait(self.poll_s)
        finally:
            connection.close()


def _spawn(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(args, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _stack(
    workdir: Path, env: dict[str, str], time_scale: float, gateway_workers: int
) -> tuple[list[subprocess.Popen[bytes]], dict[str, str]]:
    """Meter emulator, simulated fleet (no random faults), gateway: separate processes on free ports."""
    import yaml

    from devtools.ports import free_port, wait_for_port
    from sim.profiles import DEFAULT_PROFILES

    def calm(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: calm(v) for k, v in node.items() if k not in ("faults", "incidents")}
        return node

    profiles = workdir / "profiles.yaml"
    profiles.write_text(yaml.safe_dump(calm(yaml.safe_load(Path(DEFAULT_PROFILES).read_text()))))
    ports = {"meter": free_port(), "sim": free_port(), "gateway": free_port()}
    py = sys.executable
    procs = [
        _spawn([py, "-m", "fakes.stripe_meter", "--port", str(ports["meter"])], env, workdir / "meter.log"),
        _spawn(
            [
                py,
                "-m",
                "sim",
                "--port",
                str(ports["sim"]),
                "--time-scale",
                str(time_scale),
                "--profiles",
                str(profiles),
            ],
            env,
            workdir / "sim.log",
        ),
        _spawn(
            [py, "-m", "routing", "--port", str(ports["gateway"]), "--workers", str(gateway_workers)],
            env,
            workdir / "gateway.log",
        ),
    ]
    for port in ports.values():
        wait_for_port(port)
    return procs, {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}


def _tenant_and_key(sim_url: str) -> str:
    from metering.services import tenant_available_ensure
    from publishing.catalog_snapshot import publish_catalog
    from tenants.models import Tenant
    from tests.catalogs import apply_catalog_file
    from tests.factories import issue_key

    apply_catalog_file(ROOT / "demo" / "catalog.yaml", sim_base_url=sim_url)
    publish_catalog()
    tenant = Tenant.objects.create(
        slug="bench-e2e",
        name="Bench",
        billing_mode="postpaid",
        credit_limit_micros=10**12,
        stripe_customer_id="cus_bench_e2e",
    )
    tenant_available_ensure(tenant=tenant)
    return issue_key(tenant)[1]


def _wait_settled(load: Load, poller: LedgerPoller, meter_url: str) -> list[dict[str, Any]]:
    import requests

    deadline = time.monotonic() + SETTLE_S
    rows: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        rows = requests.get(f"{meter_url}/_emulator/identifiers", timeout=30).json()["data"]
        visible = sum(1 for rid in load.ended if rid in poller.seen)
        accepted = sum(1 for row in rows if row["identifier"] in load.ended)
        if visible == accepted == len(load.ended):
            break
        time.sleep(1.0)
    return rows


def measure(args: argparse.Namespace, workdir: Path, env: dict[str, str]) -> dict[str, Any]:
    procs, urls = _stack(workdir, env, args.time_scale, args.gateway_workers)
    with contextlib.ExitStack() as stack:
        stack.callback(_stop, procs)  # runs last: after the poller has stopped
        key = _tenant_and_key(urls["sim"])
        manage = [sys.executable, str(ROOT / "manage.py")]
        env_meter = {**env, "STRIPE_METER_API_BASE": urls["meter"], "STRIPE_API_KEY": "sk_test_bench"}
        procs += [
            _spawn([*manage, "consume_usage", "--name", "bench-e2e"], env_meter, workdir / "consumer.log"),
            _spawn([*manage, "push_meter_events", "--loop", "1.0"], env_meter, workdir / "meter_push.log"),
        ]
        poller = LedgerPoller(args.poll_ms / 1000)
        poller.start()
        stack.callback(_poller_stop, poller)  # its connection must close before the test database is dropped
        # Warm-up, not measured: until the consumer and the pusher are up and have caught up with it.
        warm = _run(run_load(f"{urls['gateway']}/v1/chat/completions", key, args.rate, 3.0))
        _wait_settled(warm, poller, urls["meter"])
        cpu_before = _cpu_seconds(procs)
        started = time.monotonic()
        load = _run(run_load(f"{urls['gateway']}/v1/chat/completions", key, args.rate, args.duration))
        elapsed = time.monotonic() - started
        meter_rows = _wait_settled(load, poller, urls["meter"])
        cpu = {name: after - cpu_before[name] for name, after in _cpu_seconds(procs).items()}
    ledger = [poller.seen[rid] - end for rid, end in load.ended.items() if rid in poller.seen]
    meter = [
        row["accepted_at"] - load.ended[row["identifier"]] for row in meter_rows if row["identifier"] in load.ended
    ]
    return {"load": load, "elapsed": elapsed, "ledger": ledger, "meter": meter, "cpu": cpu}


def _poller_stop(poller: LedgerPoller) -> None:
    poller.stop.set()
    poller.join(timeout=5)


PROCESS_NAMES = ("meter emulator", "simulator", "gateway", "consumer", "meter pusher")  # _stack's, then measure's


def _cpu_seconds(procs: list[subprocess.Popen[bytes]]) -> dict[str, float]:
    """CPU seconds (user + system) each part of the stack has used so far."""
    import psutil

    used = {}
    for name, proc in zip(PROCESS_NAMES, procs, strict=True):
        used[name] = 0.0
        with contextlib.suppress(psutil.Error):  # a process gone: its CPU is no longer known
            parent = psutil.Process(proc.pid)
            times = [p.cpu_times() for p in (parent, *parent.children(recursive=True))]  # gateway workers too
            used[name] = sum(t.user + t.system for t in times)
    return used


def report(args: argparse.Namespace, result: dict[str, Any]) -> bool:
    load: Load = result["load"]
    ledger, meter = result["ledger"], result["meter"]
    ok = len(load.ended)
    started = load.sent / load.start_window if load.start_window else float("nan")
    print(
        f"\nBilling latency end to end through the gateway ({args.rate:.0f} req/s target for {args.duration:.0f} s: "
        f"{load.sent} requests started over {load.start_window:.1f} s = {started:.0f} req/s, {ok} answered 200, "
        f"all answered after {result['elapsed']:.1f} s; answer time p50 {_pct(load.latency, 50) * 1000:.0f} ms, "
        f"p99 {_pct(load.latency, 99) * 1000:.0f} ms; simulator time scale {args.time_scale:g}; "
        f"gateway workers: {args.gateway_workers}; {os.cpu_count()} cores shared by the gateway, simulator, "
        f"consumer, meter pusher, PostgreSQL, Redis and this client)\n"
    )
    print("| from request end (client has the whole answer) to | p50 | p90 | p99 | max | n | target p99 |")
    print("|---|---|---|---|---|---|---|")
    for name, values, target in (
        (f"usage row + journal + balance committed (poll {args.poll_ms} ms)", ledger, TARGET_LEDGER_P99_S),
        ("meter event accepted by the Stripe emulator", meter, TARGET_METER_P99_S),
    ):
        cells = " | ".join(f"{_pct(values, p):.2f} s" for p in (50, 90, 99))
        verdict = "met" if values and _pct(values, 99) <= target else "MISSED"
        print(f"| {name} | {cells} | {max(values or [0]):.2f} s | {len(values)} | ≤ {target:.0f} s ({verdict}) |")
    print(f"\nerrors: {load.errors or 'none'}; client late starts (>50 ms behind schedule): {load.late_starts}")
    per_request = ", ".join(
        f"{name} {seconds * 1000 / max(load.sent, 1):.2f}" for name, seconds in result["cpu"].items()
    )
    print(f"CPU ms per request started, during the measured run: {per_request}")
    print(
        f"reproduce: python -m devtools.devstack test -- python -m bench.billing_e2e_bench --rate {args.rate:.0f} "
        f"--duration {args.duration:.0f}"
    )
    complete = len(ledger) == ok == len(meter) and ok == load.sent
    met = bool(ledger and meter) and _pct(ledger, 99) <= TARGET_LEDGER_P99_S and _pct(meter, 99) <= TARGET_METER_P99_S
    return complete and met


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument(
        "--time-scale",
        type=float,
        default=0.0,
        help="sim latency scale (0: the simulator answers at once; 0.005: ~10 ms answers)",
    )
    parser.add_argument("--poll-ms", type=int, default=50)
    parser.add_argument(
        "--gateway-workers", type=int, default=1, help="gateway processes (python -m routing --workers)"
    )
    args, _unknown = parser.parse_known_args(argv)  # bench.run_all passes its arguments to every benchmark

    import django

    django.setup()
    from django.db import connection

    from bench.billing_bench import _database_url

    test_db = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    workdir = Path(tempfile.mkdtemp(prefix="billing-e2e-"))
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(connection.settings_dict),
        "PYTHONPATH": f"{ROOT}:{ROOT / 'platform'}",
        "TOKENWAY_DATA_DIR": str(workdir),
    }
    try:
        result = measure(args, workdir, env)
    finally:
        connection.close()
        connection.creation.destroy_test_db(test_db, verbosity=0)
    passed = report(args, result)
    print(f"(process logs: {workdir})")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
