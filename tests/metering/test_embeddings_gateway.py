"""Embeddings billed exactly, through the real gateway, the simulated providers, Redis, the metering
consumer and PostgreSQL: the official OpenAI SDK's ``embeddings.create`` (floats, the SDK's default base64,
token arrays), each call one usage row of input tokens at the offering's catalog price, the provider's own
count of them, and the tenant's ledger down by exactly the sum."""

from __future__ import annotations

import time
from typing import Any

import openai
import pytest

from contracts.usage import Tokens, cost_micros
from metering.consumer import UsageConsumer
from metering.ledger import tenant_account_balance
from metering.models import UsageRecord
from metering.services import balance_topup, tenant_available_ensure
from tests.factories import issue_key
from tests.routing.conftest import gateway, gateway_server, sim, sim_requests  # noqa: F401 - fixtures
from tests.routing.harness import usage_events
from tests.waiting import poll_until

pytestmark = [pytest.mark.django_db(transaction=True)]
START = 1_000_000  # µ$
MODEL = "text-embedding-3-small"


def _client(base_url: str, tenant) -> openai.OpenAI:
    balance_topup(tenant=tenant, amount_micros=START, idempotency_key=f"topup:emb:{tenant.pk}", source="stripe")
    tenant_available_ensure(tenant=tenant)
    key = issue_key(tenant, name="embeddings")[1]
    return openai.OpenAI(base_url=f"{base_url}/v1", api_key=key, max_retries=0, timeout=20)


def _ingest(redis_client, expected: int) -> None:
    poll_until(lambda: len(usage_events(redis_client)) >= expected, timeout=10, interval=0.05)
    consumer = UsageConsumer(client=redis_client, name="embeddings-test", after_batch=lambda _: None)
    deadline = time.monotonic() + 10
    while UsageRecord.objects.count() < expected and time.monotonic() < deadline:
        consumer.run(until=time.monotonic() + 0.3, block_ms=50)
    assert UsageRecord.objects.count() == expected


def test_embedding_calls_are_billed_input_tokens_at_the_catalog_price_and_the_ledger_agrees(
    gateway,  # noqa: F811
    sim,  # noqa: F811
    tenant,
    redis_client,
):
    client = _client(gateway.base_url, tenant)
    calls: list[dict[str, Any]] = [
        {"input": ["the quick brown fox", "jumps over the lazy dog"], "encoding_format": "float"},
        {"input": "a single string, in the SDK's default base64", "dimensions": 64},
        {"input": [[101, 2023, 2003], [1037, 2]], "encoding_format": "float"},
    ]
    answers = {}
    for body in calls:
        raw = client.embeddings.with_raw_response.create(model=MODEL, **body)
        answers[raw.headers["x-request-id"]] = raw.parse()
    assert [len(a.data) for a in answers.values()] == [2, 1, 2]
    assert len(next(iter(answers.values())).data[0].embedding) == 1536

    _ingest(redis_client, len(calls))

    counted = [
        entry["sim"]["true_usage"]["input_total"]
        for provider in ("openai", "openrouter")
        for entry in sim_requests(sim, provider, 10)
        if entry.get("sim", {}).get("true_usage")
    ]
    records = {r.request_id: r for r in UsageRecord.objects.filter(tenant=tenant)}
    assert set(records) == set(answers)
    for request_id, answer in answers.items():
        record = records[request_id]
        assert (record.model, record.status, record.end_state, record.usage_source) == (
            MODEL,
            "ok",
            "completed",
            "provider",
        )
        assert record.input_uncached == answer.usage.prompt_tokens > 0 and record.output == 0
        price = gateway.gateway.catalog.by_model[MODEL][0].prices
        assert record.cost_micros == cost_micros(Tokens(input_uncached=record.input_uncached), price)
        assert record.charge_micros == round(answer.usage.model_extra["cost"] * 1_000_000)
    assert records[list(answers)[2]].input_uncached == 5  # token arrays: their length
    assert sorted(counted) == sorted(r.input_uncached for r in records.values())  # the providers' own counts
    charged = sum(r.charge_micros for r in records.values())
    assert charged > 0 and tenant_account_balance(tenant_id=tenant.pk) == START - charged
