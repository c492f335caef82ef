"""Billing with SYNTHETIC usage events (the gateway is skipped): ingestion throughput and the
consumer/pusher part of billing latency. The end-to-end figures, through the real gateway, are
bench/billing_e2e_bench.py's; this one isolates metering.

1. Ingestion: N usage events pre-loaded in the Redis stream, drained by one
   in-process consumer (one core for Python; PostgreSQL runs beside it).
2. Latency: a simulated gateway XADDs usage events at --rate for --duration
   seconds while ``manage.py consume_usage`` and ``push_meter_events --loop``
   run as separate processes; for every request we measure request end ->
   ledger row committed, and request end -> accepted by the meter emulator.

Reproduce: make bench   (or: python -m devtools.devstack test -- python -m bench.billing_bench --duration 60)
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from devtools.ports import free_port as _free_port

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "platform")]
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tokenway.settings")


def _wait_port(port: int) -> None:
    for _ in range(300):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"port {port} did not open")


def _pct(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * pct / 100))] if ordered else float("nan")


def _database_url(settings_dict: dict[str, Any]) -> str:
    host, port = settings_dict["HOST"] or "127.0.0.1", settings_dict["PORT"] or "5432"
    password = f":{settings_dict['PASSWORD']}" if settings_dict["PASSWORD"] else ""
    if host.startswith("/"):
        return f"postgresql://{settings_dict['USER']}{password}@:{port}/{settings_dict['NAME']}?host={host}"
    return f"postgresql://{settings_dict['USER']}{password}@{host}:{port}/{settings_dict['NAME']}"


def _make_events(tenant_id: int, count: int, *, stamp: float | None = None) -> list[Any]:
    sys.path.insert(0, str(ROOT))
    from tests.metering.conftest import make_event

    return [make_event(tenant_id, key_id=n % 10, finished_at=stamp or time.time()) for n in range(count)]


def bench_ingestion(tenant_id: int, count: int) -> float:
    from contracts.redis_keys import USAGE_STREAM
    from foundation.redis_client import get_redis
    from metering.consumer import UsageConsumer, group_ensure

    client = get_redis()
    group_ensure(client)
    pipe = client.pipeline(transaction=False)
    for event in _make_events(tenant_id, count):
        pipe.xadd(USAGE_STREAM, {"e": event.to_json()})
    pipe.execute()
    consumer = UsageConsumer(client=client, name="bench-ingest", after_batch=lambda result: None)
    started = time.perf_counter()
    handled = 0
    while handled < count:
        handled += consumer.step(block_ms=None)
    return count / (time.perf_counter() - started)


def bench_latency(tenant_id: int, rate: int, duration: float, env: dict[str, str], emulator: str) -> dict[str, Any]:
    import requests

    from contracts.redis_keys import USAGE_STREAM, generation
    from foundation.redis_client import get_redis
    from metering.models import UsageRecord

    manage = [sys.executable, str(ROOT / "manage.py")]
    procs = [
        subprocess.Popen([*manage, "consume_usage", "--name", "bench-latency"], env=env, cwd=ROOT),
        subprocess.Popen([*manage, "push_meter_events", "--loop", "1.0"], env=env, cwd=ROOT),
    ]
    client = get_redis()
    finished: dict[str, float] = {}
    try:
        time.sleep(5)  # both processes up (Django start-up on a 2-core machine)
        interval, next_at, deadline = 1.0 / rate, time.monotonic(), time.monotonic() + duration
        template = _make_events(tenant_id, 1)[0]
        n = 0
        while time.monotonic() < deadline:
            now = time.time()
            event = type(template)(**{**_fields(template), "request_id": f"lat_{n}", "finished_at": now})
            pipe = client.pipeline(transaction=False)
            pipe.xadd(USAGE_STREAM, {"e": event.to_json()})
            pipe.set(generation(event.request_id), event.to_json(), ex=3600)
            pipe.execute()
            finished[event.request_id] = now
            n += 1
            next_at += interval
            time.sleep(max(0.0, next_at - time.monotonic()))
        sent_rate = n / duration
        settle_deadline = time.monotonic() + 60
        while time.monotonic() < settle_deadline:
            accepted = requests.get(f"{emulator}/_emulator/totals", timeout=5).json()["events"]
            if accepted >= n and UsageRecord.objects.filter(request_id__startswith="lat_").count() >= n:
                break
            time.sleep(0.5)
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=15)
    ledger = [
        (created.timestamp() - finished[rid]) * 1000
        for rid, created in UsageRecord.objects.filter(request_id__startswith="lat_").values_list(
            "request_id", "created_at"
        )
    ]
    rows = requests.get(f"{emulator}/_emulator/identifiers", timeout=30).json()["data"]
    meter = [(r["accepted_at"] - finished[r["identifier"]]) * 1000 for r in rows if r["identifier"] in finished]
    return {"sent": n, "rate": sent_rate, "ledger": ledger, "meter": meter}


def _fields(event: Any) -> dict[str, Any]:
    from dataclasses import fields

    return {f.name: getattr(event, f.name) for f in fields(event)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--rate", type=int, default=200)
    parser.add_argument("--ingest-events", type=int, default=20_000)
    args, _unknown = parser.parse_known_args(argv)

    import django

    django.setup()
    from django.conf import settings
    from django.db import connection

    from tenants.models import Tenant

    test_db = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    port = _free_port()
    emulator = subprocess.Popen([sys.executable, "-m", "fakes.stripe_meter", "--port", str(port)], cwd=ROOT)
    try:
        _wait_port(port)
        base = f"http://127.0.0.1:{port}"
        settings.STRIPE_METER_API_BASE = base
        env = {
            **os.environ,
            "DATABASE_URL": _database_url(connection.settings_dict),
            "STRIPE_METER_API_BASE": base,
            "STRIPE_API_KEY": "sk_test_bench",
            "PYTHONPATH": f"{ROOT}:{ROOT / 'platform'}",
        }
        tenant = Tenant.objects.create(
            slug="bench",
            name="Bench",
            billing_mode="postpaid",
            credit_limit_micros=10**12,
            stripe_customer_id="cus_bench",
        )
        latency = bench_latency(tenant.pk, args.rate, args.duration, env, base)
        ingest_rate = bench_ingestion(tenant.pk, args.ingest_events)
    finally:
        emulator.terminate()
        emulator.wait(timeout=10)
        connection.creation.destroy_test_db(test_db, verbosity=0)

    print(
        f"\nbilling bench, SYNTHETIC events (no gateway; see bench.billing_e2e_bench): {args.rate} req/s target for {args.duration:.0f}s ({latency['sent']} requests, "
        f"{latency['rate']:.0f} req/s sent), {os.cpu_count()} cores"
    )
    print(f"{'metric':<48}{'p50':>10}{'p99':>10}{'max':>10}")
    for name, values in (
        ("request end -> ledger + balance (ms)", latency["ledger"]),
        ("request end -> accepted by meter emulator (ms)", latency["meter"]),
    ):
        print(f"{name:<48}{_pct(values, 50):>10.0f}{_pct(values, 99):>10.0f}{max(values or [0]):>10.0f}")
    print(f"{'ingestion, one consumer process (events/s)':<48}{ingest_rate:>10.0f}")
    print(f"{'requests ingested / accepted by meter':<48}{len(latency['ledger']):>10}{len(latency['meter']):>10}")
    print(
        "reproduce: python -m devtools.devstack test -- python -m bench.billing_bench "
        f"--duration {args.duration:.0f} --rate {args.rate}"
    )
    return 0 if len(latency["ledger"]) == latency["sent"] == len(latency["meter"]) else 1


if __name__ == "__main__":
    sys.exit(main())
