"""No answered call lost silently: with the usage spool unwritable and then Redis gone, through the real
gateway (on a Redis of the test's own), the simulated providers, the metering consumer and PostgreSQL.
The call answered while Redis died is kept in memory and booked once Redis is back; meanwhile /healthz
is degraded, the metrics say so, and new paid calls are refused 503 with Retry-After in the caller's
wire format, moving no money."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import requests
from prometheus_client.parser import text_string_to_metric_families

from contracts import redis_keys as rk
from contracts.apikey_format import generate_key, hash_key
from contracts.env import DEV_PEPPER
from contracts.keyrecord import KeyRecord
from metering.consumer import UsageConsumer
from metering.ledger import tenant_account_balance
from metering.models import Journal, UsageRecord
from metering.services import balance_topup
from routing.app import make_gateway_app
from tests.catalogs import sim_catalog
from tests.routing import harness
from tests.routing.conftest import add_fault, sim  # noqa: F401 - fixtures
from tests.routing.harness import ServerThread, publish_catalog
from tests.routing.own_redis import OwnRedis
from tests.waiting import wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.adversarial]
TOPUP = 5_000_000
MSG = [{"role": "user", "content": "Say hello."}]
OPENAI = ("/v1/chat/completions", {"model": "gpt-4.1-mini", "messages": MSG, "max_tokens": 5,
                                   "provider": {"only": ["openai"]}})  # fmt: skip
ANTHROPIC = ("/v1/messages", {"model": "claude-haiku-4.5", "messages": MSG, "max_tokens": 5})


@pytest.fixture
def unwritable(tmp_path: Path, sim) -> Iterator[tuple[OwnRedis, ServerThread]]:  # noqa: F811
    """A gateway whose spool folder cannot be created (a file stands where it would be)."""
    own = OwnRedis()
    own.start()
    client = redis.Redis.from_url(own.url)
    publish_catalog(client, sim_catalog(sim.provider_url))
    client.set(rk.STATE_MARKER, "boot-1")
    blocker = tmp_path / "spool"
    blocker.write_text("a file, not a folder\n")
    server = ServerThread(make_gateway_app(harness.test_config(redis_url=own.url, spool_dir=str(blocker))))
    requests.post(f"{sim.base_url}/_sim/reset", timeout=5)
    requests.delete(f"{sim.base_url}/_sim/faults", timeout=5)
    try:
        yield own, server
    finally:
        server.stop()
        client.close()
        own.close()


def _key(url: str, tenant: Any) -> str:
    """The platform's key record and balance, published to the gateway's Redis."""
    key = generate_key(live=False)
    record = KeyRecord(key_id=tenant.pk * 10, tenant_id=tenant.pk, tenant_slug=tenant.slug, name="app", prefix=key[:12])
    client = redis.Redis.from_url(url)
    client.set(rk.key_record(hash_key(key, DEV_PEPPER)), record.to_json())
    client.set(rk.tenant_available(tenant.pk), TOPUP)
    client.close()
    return key


def _post(server: ServerThread, key: str, path: str, body: dict[str, Any]) -> requests.Response:
    return requests.post(server.base_url + path, json=body, headers={"authorization": f"Bearer {key}"}, timeout=20)


def _newest_request(fleet: Any) -> Any:
    """The last request the simulated openai provider received (logged as it arrives), or None."""
    found = requests.get(f"{fleet.base_url}/_sim/requests?provider=openai&limit=1", timeout=5).json()["requests"]
    return found[0] if found else None


def _consume(url: str, request_ids: set[str]) -> None:
    client = redis.Redis.from_url(url)
    consumer = UsageConsumer(client=client, name="spool-test", after_batch=lambda _: None)
    deadline = time.monotonic() + 10
    while not request_ids <= set(UsageRecord.objects.values_list("request_id", flat=True)):
        assert time.monotonic() < deadline, "answered calls left unbilled"
        consumer.run(until=time.monotonic() + 0.2, block_ms=20)
    client.close()


def test_answered_calls_are_billed_and_paid_work_is_refused_while_neither_redis_nor_the_spool_takes_usage(
    unwritable,
    sim,  # noqa: F811
    tenant,
):
    own, server = unwritable
    balance_topup(tenant=tenant, amount_micros=TOPUP, idempotency_key="topup:spool", source="stripe")
    key = _key(own.url, tenant)
    first = _post(server, key, *OPENAI)
    assert first.status_code == 200, first.text
    _consume(own.url, {first.headers["x-request-id"]})
    health = requests.get(f"{server.base_url}/healthz", timeout=5).json()
    assert health["status"] == "degraded" and health["usage_spool"]["writable"] is False  # seen before needed
    assert health["usage_spool"]["refusing"] is False  # Redis still takes usage: calls go on

    # Redis dies while a call is in flight, after admission: its usage has nowhere durable to go.
    add_fault(sim, provider="openai", kind="stall_before_first_token", count=1, stall_s=100)  # 0.5 s real
    answer: dict[str, requests.Response] = {}
    before = _newest_request(sim)
    thread = threading.Thread(target=lambda: answer.update(r=_post(server, key, *OPENAI)))
    thread.start()
    # the first call is in the provider's log already: wait for this one's request to arrive there too
    wait_until(lambda: _newest_request(sim) != before, timeout=5, message="the call never reached the provider")
    own.kill()
    thread.join(timeout=20)
    assert answer["r"].status_code == 200, answer["r"].text
    spool = server.gateway.spool
    wait_until(lambda: spool.held, timeout=5, message="the answered call's usage was not kept")

    health = requests.get(f"{server.base_url}/healthz", timeout=5).json()
    assert health["status"] == "degraded"
    assert (health["usage_spool"]["refusing"], health["usage_spool"]["held"], health["usage_spool"]["lost"]) == (
        True,
        1,
        0,
    )
    page = requests.get(f"{server.base_url}/metrics", timeout=5).text
    # summed over the gateways of this process (one in production; an earlier test's may still be registered)
    assert _gauge(page, "tokenway_gateway_refusing_paid_work") >= 1, page
    assert _gauge(page, "tokenway_gateway_usage_spool_unwritable") >= 1, page
    refused = [_post(server, key, *OPENAI), _post(server, key, *ANTHROPIC)]
    for response, shape in zip(refused, ("openai", "anthropic"), strict=True):
        assert response.status_code == 503 and int(response.headers["retry-after"]) >= 1, response.text
        error = response.json()["error"]
        assert error["code"] == "service_unavailable" and "cannot record usage" in error["message"]
        assert (response.json().get("type") == "error") == (shape == "anthropic")  # the caller's wire format

    own.start()  # back, empty: what memory held is replayed to it
    wait_until(lambda: not spool.held and not spool.refusing, timeout=10, message="held usage not replayed")
    answered = {first.headers["x-request-id"], answer["r"].headers["x-request-id"]}
    refused_ids = {r.headers["x-request-id"] for r in refused}
    _consume(own.url, answered | refused_ids)

    records = {r.request_id: r for r in UsageRecord.objects.all()}
    assert all(records[rid].charge_micros > 0 for rid in answered)
    assert {Journal.objects.get(key=f"usage:{rid}").tenant_id for rid in answered} == {tenant.pk}
    assert tenant_account_balance(tenant_id=tenant.pk) == TOPUP - sum(records[rid].charge_micros for rid in answered)
    assert {(records[rid].status, records[rid].http_status) for rid in refused_ids} == {("rejected", 503)}
    assert not Journal.objects.filter(key__in=[f"usage:{rid}" for rid in refused_ids]).exists()


def _gauge(page: str, name: str) -> float:
    """An unlabelled gauge's value on a Prometheus page, read by prometheus_client's own parser (0 when absent)."""
    samples = (s for family in text_string_to_metric_families(page) for s in family.samples)
    return next((s.value for s in samples if s.name == name and not s.labels), 0.0)
