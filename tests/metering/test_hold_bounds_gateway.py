"""Holds bound every charge, through the real gateway, the simulated providers, Redis, the metering consumer
and PostgreSQL (docs/billing.md, "Holds bound every charge"): a hostile tenant's concurrent reasoning calls
with a tiny max_tokens against a small balance, and a provider over-reporting output, each judged by the
ledger afterwards."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import pytest
import requests

from contracts.snapshot import CatalogSnapshot
from metering.consumer import UsageConsumer
from metering.ledger import tenant_account_balance
from metering.models import AccountKind, JournalLine, ReconciliationFinding, UsageRecord
from metering.services import balance_topup, tenant_available_ensure
from tests.catalogs import sim_catalog
from tests.factories import issue_key
from tests.routing.conftest import add_fault, gateway, gateway_server, sim, sim_requests  # noqa: F401 - fixtures
from tests.routing.harness import publish_catalog, usage_events
from tests.waiting import poll_until, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.adversarial]
BALANCE = 600  # µ$: about forty of these calls' holds, so the balance runs out under the burst
MSG = [{"role": "user", "content": "Think hard, then answer in one word: why is the sky blue?"}]
DEEPSEEK_ONLY = {"provider": {"only": ["deepseek"]}}


def _funded(tenant, amount: int) -> str:
    balance_topup(tenant=tenant, amount_micros=amount, idempotency_key=f"topup:holds:{tenant.pk}", source="stripe")
    tenant_available_ensure(tenant=tenant)
    return issue_key(tenant, name="hostile")[1]


def _call(base_url: str, key: str, body: dict[str, Any]) -> tuple[int, bytes]:
    response = requests.post(
        f"{base_url}/v1/chat/completions", json=body, headers={"authorization": f"Bearer {key}"}, timeout=20
    )
    return response.status_code, response.content


def _burst(base_url: str, key: str, bodies: list[dict[str, Any]]) -> list[tuple[int, bytes]]:
    with ThreadPoolExecutor(max_workers=16) as pool:
        return list(pool.map(lambda body: _call(base_url, key, body), bodies))


def _ingest(redis_client, expected: int) -> dict[str, dict[str, Any]]:
    """Every call's usage event (as the gateway handed it over), once metering has booked them all."""
    poll_until(lambda: len(usage_events(redis_client)) >= expected, timeout=10, interval=0.05)
    events = {e["request_id"]: e for e in usage_events(redis_client)}
    consumer = UsageConsumer(client=redis_client, name="holds-test", after_batch=lambda _: None)
    booked = UsageRecord.objects.filter(request_id__in=list(events))
    deadline = time.monotonic() + 10
    while booked.count() < expected and time.monotonic() < deadline:
        consumer.run(until=time.monotonic() + 0.3, block_ms=50)
    assert booked.count() == expected == len(events)
    return events


def _understated(catalog: CatalogSnapshot) -> CatalogSnapshot:
    """deepseek-r1 said to think within max_tokens (it does not): the gateway's own count must bound it."""
    offerings = tuple(replace(o, max_reasoning_tokens=0) if o.model == "deepseek-r1" else o for o in catalog.offerings)
    return replace(catalog, version=catalog.version + 1, offerings=offerings)


def _reasoning_cap(server, model: str) -> int:
    return max(o.max_reasoning_tokens for o in server.gateway.catalog.by_model[model])


def _assert_books_bounded(tenant, events: dict[str, dict[str, Any]], start: int, credit: int = 0) -> list[UsageRecord]:
    """Each row within its hold; all of them within the balance plus the credit limit; nothing uncollected."""
    records = list(UsageRecord.objects.filter(tenant=tenant))
    for record in records:
        assert record.charge_micros <= events[record.request_id]["hold_micros"], (record.request_id, record.flags)
    charged = sum(r.charge_micros for r in records)
    assert 0 < charged <= start + credit
    assert tenant_account_balance(tenant_id=tenant.pk) == start - charged >= -credit
    assert not JournalLine.objects.filter(account__kind=AccountKind.HOLD_SHORTFALL).exists()
    assert not ReconciliationFinding.objects.filter(check_name="hold_shortfall").exists()
    return records


# (billing mode, top-up, credit limit): the gateway may spend the balance plus a postpaid tenant's credit
SPENDABLE = [("prepaid", BALANCE, 0), ("postpaid", BALANCE // 3, BALANCE - BALANCE // 3)]


@pytest.mark.parametrize(("mode", "topup", "credit"), SPENDABLE, ids=[m for m, _, _ in SPENDABLE])
def test_concurrent_reasoning_calls_with_a_tiny_max_tokens_never_consume_more_than_the_balance(
    gateway,  # noqa: F811
    sim,  # noqa: F811
    tenant,
    redis_client,
    mode,
    topup,
    credit,
):
    publish_catalog(redis_client, _understated(sim_catalog(sim.provider_url, version=2)))
    wait_until(
        lambda: _reasoning_cap(gateway, "deepseek-r1") == 0,
        timeout=15,
        interval=0.01,
        message="the gateway holds the catalog that understates deepseek-r1's reasoning",
    )
    tenant.billing_mode, tenant.credit_limit_micros = mode, credit
    tenant.save(update_fields=["billing_mode", "credit_limit_micros"])
    key = _funded(tenant, topup)
    hidden = [{"model": "gpt-5-mini", "max_tokens": 10, "messages": MSG, "stream": n % 2 == 0} for n in range(40)]
    shown = [{"model": "deepseek-r1", "max_tokens": 10, "messages": MSG, "stream": True, **DEEPSEEK_ONLY}] * 40

    answers = _burst(gateway.base_url, key, [b for pair in zip(hidden, shown, strict=True) for b in pair])

    statuses = [status for status, _ in answers]
    assert statuses.count(402) > 0 and statuses.count(200) >= 10  # the balance ran out under the burst
    # 504: on a loaded machine a first byte may miss the test gateway's 1.5 s deadline; it charges nothing
    assert set(statuses) <= {200, 402, 504}
    assert all(b'"insufficient_balance"' in body for status, body in answers if status == 402)
    events = _ingest(redis_client, len(answers))
    records = _assert_books_bounded(tenant, events, topup, credit)
    by_state = {r.end_state for r in records if r.model == "deepseek-r1"}
    assert "hold_exhausted" in by_state  # streamed reasoning passed its allowance: the gateway ended it
    cut = [r for r in records if r.end_state == "hold_exhausted"]
    assert all(r.output <= 10 and "output_clamped" in r.flags and r.charge_micros > 0 for r in cut)
    mini = [r for r in records if r.model == "gpt-5-mini" and r.end_state == "completed"]
    assert mini and all(r.output == 10 and "output_clamped" in r.flags for r in mini)  # hidden reasoning, clamped


def test_a_reasoning_model_is_held_for_its_reasoning_cap_and_refused_on_a_small_balance(
    gateway,  # noqa: F811
    tenant,
    redis_client,
):
    key = _funded(tenant, BALANCE)
    status, body = _call(
        gateway.base_url, key, {"model": "deepseek-r1", "max_tokens": 10, "messages": MSG, **DEEPSEEK_ONLY}
    )
    assert (status, b'"insufficient_balance"' in body) == (402, True)  # 10 + 32,768 output tokens held
    events = _ingest(redis_client, 1)
    [event] = events.values()
    assert (event["end_state"], event["charge_micros"], event["hold_micros"]) == ("rejected", 0, 0)
    assert tenant_account_balance(tenant_id=tenant.pk) == BALANCE  # nothing changed
    assert not JournalLine.objects.filter(journal__key__startswith="usage:").exists()


def test_a_provider_over_reporting_output_is_charged_no_more_than_max_tokens(
    gateway,  # noqa: F811
    sim,  # noqa: F811
    tenant,
    redis_client,
):
    add_fault(sim, provider="openai", kind="token_overreport", factor=1.15)
    key = _funded(tenant, 1_000_000)
    bodies = [{"model": "gpt-4.1-mini", "max_tokens": 20, "messages": MSG, "stream": n % 2 == 0} for n in range(10)]

    answers = _burst(gateway.base_url, key, bodies)

    assert [status for status, _ in answers] == [200] * 10
    reported = [r["sim"]["reported_usage"]["output"] for r in sim_requests(sim, "openai", 10)]
    assert min(reported) > 20  # the provider says 22 or 23 on calls capped at 20
    events = _ingest(redis_client, 10)
    records = _assert_books_bounded(tenant, events, 1_000_000)
    assert [r.output for r in records] == [20] * 10 and all("output_clamped" in r.flags for r in records)
    over = sorted(e["output_clamped_tokens"] for e in events.values())  # the over-report, visible per call
    assert over == sorted(n - 20 for n in reported)


def test_an_anthropic_caller_sees_a_stream_ended_at_its_allowance_as_an_error_event(
    gateway,  # noqa: F811
    sim,  # noqa: F811
    tenant,
    redis_client,
):
    publish_catalog(redis_client, _understated(sim_catalog(sim.provider_url, version=2)))
    wait_until(
        lambda: _reasoning_cap(gateway, "deepseek-r1") == 0,
        timeout=15,
        interval=0.01,
        message="the gateway holds the catalog that understates deepseek-r1's reasoning",
    )
    key = _funded(tenant, BALANCE)
    # max_tokens 1: ended once our count passes 1 + 1 + 16 tokens; the simulated reasoner thinks 30 or more
    body = {"model": "deepseek-r1", "max_tokens": 1, "messages": MSG, "stream": True, **DEEPSEEK_ONLY}

    response = requests.post(f"{gateway.base_url}/v1/messages", json=body, headers={"x-api-key": key}, timeout=20)

    assert response.status_code == 200
    assert b"event: error" in response.content and b'"hold_exhausted"' in response.content
    assert b"message_stop" not in response.content
    events = _ingest(redis_client, 1)
    [record] = _assert_books_bounded(tenant, events, BALANCE)
    assert (record.end_state, record.output, record.dialect_in) == ("hold_exhausted", 1, "anthropic")
