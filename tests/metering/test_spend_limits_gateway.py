"""Key budgets and the tenant's monthly spend limit under concurrency, through the real gateway, the
simulated providers and the metering consumer: 100 calls at once spend at most the limit plus one call's
hold (checked in the ledger, not only the statuses), refusals are 402 with a code naming the limit in the
caller's wire format, a limit set below what was spent refuses at once, and ``/api/v1/key`` shows what is
left with open holds counted."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

import pytest
import requests
from django.db.models import Sum
from rest_framework.test import APIClient

from contracts import redis_keys as rk
from metering.consumer import UsageConsumer
from metering.ledger import tenant_account_balance
from metering.models import Journal, UsageRecord
from metering.services import balance_topup, tenant_available_ensure
from tenants.services import tenant_update
from tests.factories import issue_key
from tests.routing.conftest import add_fault, gateway, gateway_server, sim  # noqa: F401 - the gateway fixtures
from tests.waiting import poll_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.adversarial]

CALLS = 100
FUNDS = 50_000_000  # far above every limit here: only the limit under test refuses
LIMIT = 2_000  # the issue's budget: about a dozen holds of these calls fit at once
# Every call is held upstream this many simulated seconds (x 0.005 = 0.3 s real), so the 100 calls are
# in flight together: admission sees the open holds, not settled spend.
IN_FLIGHT_STALL_S = 60.0
MSG = [{"role": "user", "content": "Write a short poem about limits."}]
OPENAI = ("/v1/chat/completions", {"model": "gpt-4.1-mini", "messages": MSG, "max_tokens": 100})
ANTHROPIC = ("/v1/messages", {"model": "claude-haiku-4.5", "messages": MSG, "max_tokens": 40})


def _fund(tenant) -> None:
    balance_topup(tenant=tenant, amount_micros=FUNDS, idempotency_key=f"topup:{tenant.pk}", source="stripe")
    tenant_available_ensure(tenant=tenant)


def _post(gateway, plaintext: str, call: tuple[str, dict[str, Any]]) -> requests.Response:  # noqa: F811
    path, body = call
    auth = {"x-api-key": plaintext} if path == "/v1/messages" else {"authorization": f"Bearer {plaintext}"}
    return requests.post(f"{gateway.base_url}{path}", json=body, headers=auth, timeout=30)


def _burst(gateway, calls: list[tuple[str, tuple[str, dict[str, Any]]]]) -> list[requests.Response]:  # noqa: F811
    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return list(pool.map(lambda c: _post(gateway, c[0], c[1]), calls))


def _ingest(redis_client, tenant, expected: int) -> None:
    consumer = UsageConsumer(client=redis_client, name="spend-limits-test", after_batch=lambda _: None)
    records = UsageRecord.objects.filter(tenant=tenant)
    deadline = time.monotonic() + 15
    while records.count() < expected and time.monotonic() < deadline:
        consumer.run(until=time.monotonic() + 0.3, block_ms=50)
    assert records.count() == expected


def _code(response: requests.Response) -> str:
    return str(response.json()["error"]["code"])


def _assert_ledger_within(tenant, responses: list[requests.Response], *, limit: int, code: str) -> None:
    """Every answered call booked once, every refused one booked nothing, and the charges stay within the
    limit plus one call's worth (a hold bounds its call's charge, so one charge is at most one hold)."""
    answered = [r.headers["x-request-id"] for r in responses if r.status_code == 200]
    refused = [r for r in responses if r.status_code != 200]
    assert answered and refused, "the burst must meet the limit"
    assert {(r.status_code, _code(r)) for r in refused} == {(402, code)}
    records = UsageRecord.objects.filter(tenant=tenant)
    charged = list(records.filter(status="ok").values_list("charge_micros", flat=True))
    assert sorted(records.filter(status="ok").values_list("request_id", flat=True)) == sorted(answered)
    rejected = records.filter(status="rejected")
    assert rejected.count() == len(refused)
    assert set(rejected.values_list("http_status", "error_code", "charge_micros")) == {(402, code, 0)}
    assert Journal.objects.filter(kind="usage", key__in=[f"usage:{rid}" for rid in answered]).count() == len(answered)
    total = sum(charged)
    assert tenant_account_balance(tenant_id=tenant.pk) == FUNDS - total
    assert total <= limit + max(charged), f"{len(answered)} answered, {total} charged on a limit of {limit}"


def test_100_concurrent_calls_spend_at_most_the_key_budget_plus_one_hold(gateway, sim, tenant, redis_client):  # noqa: F811
    _fund(tenant)
    _, plaintext = issue_key(tenant, name="budgeted", monthly_budget_micros=LIMIT)
    add_fault(sim, provider="*", kind="stall_mid_stream", stall_s=IN_FLIGHT_STALL_S)
    responses = _burst(gateway, [(plaintext, OPENAI)] * CALLS)
    assert {r.json()["error"]["type"] for r in responses if r.status_code == 402} == {"insufficient_quota"}
    _ingest(redis_client, tenant, CALLS)
    _assert_ledger_within(tenant, responses, limit=LIMIT, code="key_budget_exceeded")
    assert not redis_client.exists(rk.tenant_held(tenant.pk))  # every hold given back


def test_100_concurrent_calls_over_two_keys_spend_at_most_the_tenant_limit_plus_one_hold(
    gateway, sim, tenant, redis_client,  # noqa: F811
):  # fmt: skip
    _fund(tenant)
    tenant_update(tenant=tenant, monthly_spend_limit_micros=LIMIT)
    _, openai_key = issue_key(tenant, name="openai sdk")
    _, anthropic_key = issue_key(tenant, name="claude code")
    add_fault(sim, provider="*", kind="stall_mid_stream", stall_s=IN_FLIGHT_STALL_S)
    responses = _burst(gateway, [(openai_key, OPENAI), (anthropic_key, ANTHROPIC)] * (CALLS // 2))
    anthropic_refusals = [r.json() for r in responses[1::2] if r.status_code == 402]
    assert anthropic_refusals and all(
        body["type"] == "error" and body["error"]["type"] == "billing_error" for body in anthropic_refusals
    )
    _ingest(redis_client, tenant, CALLS)
    _assert_ledger_within(tenant, responses, limit=LIMIT, code="tenant_spend_limit_exceeded")


def test_a_1_micro_limit_with_spend_booked_refuses_within_a_second_and_books_nothing(
    gateway, tenant, redis_client,  # noqa: F811
):  # fmt: skip
    _fund(tenant)
    _, plaintext = issue_key(tenant)
    assert _post(gateway, plaintext, OPENAI).status_code == 200
    _ingest(redis_client, tenant, 1)
    spent = UsageRecord.objects.get(tenant=tenant).charge_micros
    month_spend = rk.tenant_month_spend(tenant.pk, datetime.now(tz=UTC).strftime("%Y%m"))
    redis_client.delete(month_spend)  # as after Redis lost it: the limit's publication seeds it from the ledger
    tenant_update(tenant=tenant, monthly_spend_limit_micros=1)  # committed and published when it returns
    changed = time.monotonic()
    assert int(redis_client.get(month_spend)) == spent
    answered_late = 0  # calls a gateway answered before it learned the limit (its cached record)
    while (first := _post(gateway, plaintext, OPENAI)).status_code == 200 and time.monotonic() - changed < 1.0:
        answered_late += 1
    assert (first.status_code, _code(first)) == (402, "tenant_spend_limit_exceeded")
    assert time.monotonic() - changed < 1.0
    refused = [first] + [_post(gateway, plaintext, call) for call in (OPENAI, ANTHROPIC) * 2]
    assert [(r.status_code, _code(r)) for r in refused] == [(402, "tenant_spend_limit_exceeded")] * 5
    _ingest(redis_client, tenant, 1 + answered_late + 5)
    records = UsageRecord.objects.filter(tenant=tenant)
    assert records.filter(status="ok").count() == Journal.objects.filter(kind="usage").count() == 1 + answered_late
    assert set(records.filter(status="rejected").values_list("request_id", "charge_micros")) == {
        (r.headers["x-request-id"], 0) for r in refused
    }
    charges = records.aggregate(s=Sum("charge_micros"))["s"]
    assert tenant_account_balance(tenant_id=tenant.pk) == FUNDS - charges  # the refused calls moved nothing


def _current_key(plaintext: str) -> dict[str, Any]:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    response = client.get("/api/v1/key")
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


def test_current_key_shows_what_is_left_of_the_budget_and_the_spend_limit_with_open_holds(
    gateway, sim, tenant, redis_client,  # noqa: F811
):  # fmt: skip
    budget, limit = 1_000_000, 3_000_000
    _fund(tenant)
    tenant_update(tenant=tenant, monthly_spend_limit_micros=limit)
    _, plaintext = issue_key(tenant, monthly_budget_micros=budget)
    assert _post(gateway, plaintext, OPENAI).status_code == 200
    _ingest(redis_client, tenant, 1)
    spent = UsageRecord.objects.get(tenant=tenant).charge_micros
    add_fault(sim, provider="*", kind="stall_mid_stream", stall_s=200.0)  # 1 s in flight
    in_flight = threading.Thread(target=_post, args=(gateway, plaintext, OPENAI))
    in_flight.start()
    try:
        body = poll_until(lambda: (b := _current_key(plaintext))["key"]["held_micros"] and b, timeout=5)
    finally:
        in_flight.join()
    held = body["key"]["held_micros"]
    assert held > 0 and body["tenant"]["held_micros"] == held
    assert body["key"]["spend_this_month_micros"] == spent and body["key"]["limits"]["monthly_budget_micros"] == budget
    assert body["key"]["budget_remaining_micros"] == budget - spent - held
    assert body["tenant"]["spend_limit_remaining_micros"] == limit - spent - held
    _ingest(redis_client, tenant, 2)
    total = UsageRecord.objects.filter(tenant=tenant).aggregate(s=Sum("charge_micros"))["s"]
    after = _current_key(plaintext)
    assert (after["key"]["held_micros"], after["key"]["budget_remaining_micros"]) == (0, budget - total)
    assert (after["tenant"]["held_micros"], after["tenant"]["spend_limit_remaining_micros"]) == (0, limit - total)
