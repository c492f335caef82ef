"""A hostile tenant cannot stop billing: under load from other tenants, through the real gateway, the
simulated providers, Redis, the metering consumer and PostgreSQL, a model name with a NUL (a 404 for its
caller) is booked as a refused call, and an event the ledger cannot hold is dead-lettered alone; every
other call is billed within seconds, the dead letter shows on /healthz, /metrics and ``reconcile``, and
the operator's replay after a repair books it once."""

from __future__ import annotations

import dataclasses
import json
import time
from concurrent.futures import ThreadPoolExecutor
from io import StringIO
from typing import Any

import pytest
import requests
from django.core.management import CommandError, call_command
from django.test import Client

from contracts.storable import BIGINT_MAX
from metering.consumer import UsageConsumer
from metering.dead_letters import dead_letters_list
from metering.ingest import usage_ingest
from metering.ledger import tenant_account_balance
from metering.models import AccountKind, Journal, UsageRecord
from metering.services import balance_topup, tenant_available_ensure
from tenants.models import BillingMode
from tests.factories import TenantFactory, issue_key
from tests.metering.conftest import make_event, tenant_stream
from tests.routing.conftest import gateway, gateway_server, sim  # noqa: F401 - fixtures

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.adversarial]
TOPUP = 5_000_000
TENANTS, CALLS_EACH = 4, 6
BILLED_WITHIN_S = 10.0
BODY = {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 5}


def _call(base_url: str, key: str, model: str = "gpt-4.1-mini") -> requests.Response:
    headers = {"authorization": f"Bearer {key}", "content-type": "application/json"}
    # json.dumps keeps the NUL as the escape \u0000, as a client's JSON library sends it
    return requests.post(
        f"{base_url}/v1/chat/completions", data=json.dumps({**BODY, "model": model}), headers=headers, timeout=20
    )


def _payer(slug: str) -> tuple[Any, str]:
    tenant: Any = TenantFactory(slug=slug)
    balance_topup(tenant=tenant, amount_micros=TOPUP, idempotency_key=f"topup:{slug}", source="stripe")
    tenant_available_ensure(tenant=tenant)
    return tenant, issue_key(tenant, name="app")[1]


def test_a_nul_model_and_an_unbookable_event_under_load_stop_no_one_else_s_billing(gateway, redis_client):  # noqa: F811
    payers = [_payer(f"payer-{n}") for n in range(TENANTS)]
    hostile, hostile_key = _payer("hostile")
    postpaid = TenantFactory(slug="postpaid-poison", billing_mode=BillingMode.POSTPAID)
    usage_ingest(events=[make_event(postpaid.pk, request_id="req_earlier")])
    poison = dataclasses.replace(
        make_event(postpaid.pk, request_id="req_poison"), prices=None, cost_micros=0, charge_micros=BIGINT_MAX
    )  # its spent balance cannot hold this

    with ThreadPoolExecutor(max_workers=8) as pool:
        calls = [pool.submit(_call, gateway.base_url, key) for _, key in payers for _ in range(CALLS_EACH // 2)]
        nul = pool.submit(_call, gateway.base_url, hostile_key, "deepseek-v3.2\x00")
        redis_client.xadd(tenant_stream(postpaid.pk), {"e": poison.to_json()})  # a producer we do not control
        calls += [pool.submit(_call, gateway.base_url, key) for _, key in payers for _ in range(CALLS_EACH // 2)]
        answers = [future.result() for future in calls]
    answered_at = time.monotonic()
    assert [a.status_code for a in answers] == [200] * TENANTS * CALLS_EACH
    assert nul.result().status_code == 404 and nul.result().json()["error"]["code"] == "model_not_found"
    wanted = {a.headers["x-request-id"] for a in answers} | {nul.result().headers["x-request-id"]}

    consumer = UsageConsumer(client=redis_client, name="poison-under-load", after_batch=lambda _: None)
    while not wanted <= set(UsageRecord.objects.values_list("request_id", flat=True)):
        assert time.monotonic() - answered_at < BILLED_WITHIN_S, "calls of other tenants left unbilled"
        consumer.run(until=time.monotonic() + 0.2, block_ms=20)

    for (tenant, _), share in zip(payers, range(TENANTS), strict=True):
        records = UsageRecord.objects.filter(tenant_id=tenant.pk)
        assert records.count() == CALLS_EACH and all(r.charge_micros > 0 for r in records), share
        charges = sum(r.charge_micros for r in records)
        assert Journal.objects.filter(tenant_id=tenant.pk, kind="usage").count() == CALLS_EACH
        assert tenant_account_balance(tenant_id=tenant.pk) == TOPUP - charges
    refused = UsageRecord.objects.get(request_id=nul.result().headers["x-request-id"])
    assert (refused.status, refused.http_status, refused.model) == ("rejected", 404, "deepseek-v3.2\ufffd")
    assert tenant_account_balance(tenant_id=hostile.pk) == TOPUP  # a refused call moves no money

    [letter] = dead_letters_list(redis_client)
    assert letter.request_id == "req_poison" and "out of range" in letter.error
    assert not Journal.objects.filter(key="usage:req_poison").exists()
    _shown(letter.dead_id)
    _replayed_once(letter.dead_id, postpaid)


def _shown(dead_id: str) -> None:
    """/healthz degrades (still 200: the platform serves), /metrics counts it, reconcile names it."""
    web = Client()
    health = web.get("/healthz")
    assert health.status_code == 200 and health.json()["status"] == "degraded"
    usage = health.json()["components"]["usage"]
    assert (usage["status"], usage["dead_letters"], usage["dead_lettered_total"]) == ("degraded", 1, 1)
    page = web.get("/metrics").content.decode()
    assert "tokenway_usage_dead_letters 1.0" in page and "tokenway_usage_dead_lettered_total 1.0" in page
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("reconcile", stdout=out)
    assert "\tusage_dead_lettered\t" in out.getvalue()
    listing = StringIO()
    call_command("usage_dead_letters", "list", stdout=listing)
    assert dead_id in listing.getvalue() and "req_poison" in listing.getvalue()


def _replayed_once(dead_id: str, postpaid) -> None:
    spent = tenant_account_balance(tenant_id=postpaid.pk, kind=AccountKind.SPENT)
    out = StringIO()
    call_command("usage_dead_letters", "repair", dead_id, "--set", "charge_micros=2500", stdout=out)
    call_command("usage_dead_letters", "replay", stdout=out)
    call_command("usage_dead_letters", "replay", stdout=out)
    assert "booked 1, already booked 0, failed 0" in out.getvalue()
    assert "booked 0, already booked 0, failed 0" in out.getvalue()
    assert tenant_account_balance(tenant_id=postpaid.pk, kind=AccountKind.SPENT) == spent + 2500
    assert Journal.objects.filter(key="usage:req_poison").count() == 1
    health = Client().get("/healthz").json()
    assert health["components"]["usage"]["dead_letters"] == 0
