"""Usage events with the consumer SIGKILLed at five crash points and Redis restarted in between.

0 lost, 0 billed twice, ledger = Σ charge = Σ accepted by the meter emulator.
The consumers and pushers are real subprocesses (``manage.py consume_usage`` /
``push_meter_events``) that kill themselves at a named point (metering.crash).
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
import redis
from django.db import connection
from django.db.models import Sum

from contracts.redis_keys import USAGE_GROUP, USAGE_STREAM
from metering.models import AccountKind, Balance, Journal, MeterEvent, MeterStatus, UsageRecord
from tests.metering.conftest import emulator_totals, free_port, make_event, spawn, wait_port
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
MANAGE = [sys.executable, str(ROOT / "manage.py")]
CLAIM_MIN_IDLE_MS = 300  # the consumers' XAUTOCLAIM threshold in these runs (default 15 s)


class DurableRedis:
    """A redis-server with fsync on every write, restartable on the same port and data folder."""

    def __init__(self, folder: Path) -> None:
        from devtools.devstack import _redis_binary

        self.port, self.folder, self.binary = free_port(), folder, _redis_binary()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder)]
        args += ["--appendonly", "yes", "--appendfsync", "always", "--save", ""]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL)
        wait_port(self.port)

    def crash_and_restart(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self.start()

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


def _all_pending_idle(client: redis.Redis, *, min_idle_ms: int) -> bool:
    """Every entry still pending in the usage group was delivered at least ``min_idle_ms`` ago
    (not yet while the restarted server is still loading its append-only file)."""
    try:
        pending = client.xpending(USAGE_STREAM, USAGE_GROUP)["pending"]
    except redis.BusyLoadingError:
        return False
    if not pending:
        return True
    entries = client.xpending_range(USAGE_STREAM, USAGE_GROUP, min="-", max="+", count=pending)
    return all(int(entry["time_since_delivered"]) >= min_idle_ms for entry in entries)


def _database_url() -> str:
    s = connection.settings_dict
    password = f":{s['PASSWORD']}" if s["PASSWORD"] else ""
    host, port = s["HOST"] or "127.0.0.1", s["PORT"] or "5432"
    if host.startswith("/"):  # a unix socket folder (the embedded server)
        return f"postgresql://{s['USER']}{password}@:{port}/{s['NAME']}?host={host}"
    return f"postgresql://{s['USER']}{password}@{host}:{port}/{s['NAME']}"


def _run(args: list[str], env: dict[str, str], log: Path, timeout: float = 120) -> int:
    process = spawn([*MANAGE, *args], env=env, log=log)
    try:
        return process.wait(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()


def _crash_run(args: list[str], env: dict[str, str], log: Path, point: str, after: int) -> None:
    code = _run(args, {**env, "TOKENWAY_CRASH_AT": point, "TOKENWAY_CRASH_AFTER": str(after)}, log)
    assert code == -signal.SIGKILL, f"{point}: expected a SIGKILL death, got {code} (see {log})"


def _scenario(tmp_path: Path, tenant, meter_emulator: str, settings, count: int) -> None:
    tenant.billing_mode, tenant.credit_limit_micros, tenant.stripe_customer_id = "postpaid", 10**12, "cus_crash"
    tenant.save()
    server = DurableRedis(tmp_path)
    server.start()
    try:
        client = redis.Redis.from_url(server.url)
        events = [make_event(tenant.pk, key_id=n % 7) for n in range(count)]
        pipe = client.pipeline(transaction=False)
        for event in events:
            pipe.xadd(USAGE_STREAM, {"e": event.to_json()})
        pipe.xadd(USAGE_STREAM, {"e": events[0].to_json()})  # a gateway retry: the same request twice
        pipe.execute()
        env = {
            "DATABASE_URL": _database_url(),
            "REDIS_URL": server.url,  # one plain server of its own, whatever the session's Redis is
            "TOKENWAY_REDIS_CLUSTER": "0",
            "TOKENWAY_USAGE_SHARDS": "1",
            "STRIPE_METER_API_BASE": meter_emulator,
            "STRIPE_API_KEY": "sk_test_crash",
            "TOKENWAY_CLAIM_MIN_IDLE_MS": str(CLAIM_MIN_IDLE_MS),
        }
        log = tmp_path / "processes.log"
        consume = ["consume_usage", "--until-idle", "--name", "c1"]
        push = ["push_meter_events", "--until-idle"]
        # 1-3: the consumer dies after receipt, mid-batch (inside the DB transaction), after the ledger commit.
        for point in ("after_receipt", "mid_batch", "after_ledger"):
            _crash_run(consume, env, log, point, after=2)
            server.crash_and_restart()
        # 4-5: the Stripe pusher dies mid-push and after Stripe's 2xx, before marking rows sent.
        _crash_run(push, env, log, "during_stripe_push", after=1)
        _crash_run(push, env, log, "after_stripe_2xx", after=2)
        server.crash_and_restart()
        # A new consumer under another name takes over c1's unacked entries with XAUTOCLAIM, which claims only
        # entries idle for TOKENWAY_CLAIM_MIN_IDLE_MS: wait until every pending entry is that old.
        fresh = redis.Redis.from_url(server.url)
        wait_until(
            lambda: _all_pending_idle(fresh, min_idle_ms=CLAIM_MIN_IDLE_MS),
            timeout=10,
            message="c1's pending entries never reached the claim idle time",
        )
        assert _run(["consume_usage", "--until-idle", "--name", "c2"], env, log) == 0
        assert _run(push, env, log) == 0
        client = redis.Redis.from_url(server.url)
        assert client.xpending(USAGE_STREAM, USAGE_GROUP)["pending"] == 0
    finally:
        server.stop()

    expected_charge = sum(e.charge_micros for e in events)
    expected_cost = sum(e.cost_micros for e in events)
    assert UsageRecord.objects.count() == count  # 0 lost, 0 twice
    assert Journal.objects.filter(kind="usage").count() == count
    assert UsageRecord.objects.aggregate(s=Sum("charge_micros"))["s"] == expected_charge

    def balance(kind, tenant_id=None):
        return Balance.objects.get(account__kind=kind, account__tenant_id=tenant_id).amount_micros

    assert balance(AccountKind.AVAILABLE, tenant.pk) == -expected_charge
    assert balance(AccountKind.SPENT, tenant.pk) == expected_charge
    assert balance(AccountKind.PROVIDER_COST) == expected_cost
    assert MeterEvent.objects.filter(status=MeterStatus.SENT).count() == count
    totals = emulator_totals(meter_emulator)
    assert totals["events"] == count
    assert totals["customers"] == {"cus_crash": expected_charge}
    assert totals["duplicates"] > 0  # the resends after the crashes really happened and were deduplicated


@pytest.mark.django_db(transaction=True)
def test_consumer_killed_at_five_points_with_redis_restarts_loses_and_doubles_nothing(
    tmp_path, tenant, meter_emulator, settings
):
    _scenario(tmp_path, tenant, meter_emulator, settings, count=2_000)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_ten_thousand_events_survive_the_five_crash_points(tmp_path, tenant, meter_emulator, settings):
    _scenario(tmp_path, tenant, meter_emulator, settings, count=10_000)
