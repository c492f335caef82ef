"""The dishonest demo reseller through the real gateway, the simulated fleet, Redis and PostgreSQL.

``bargain-cloud`` reports 15% more tokens than it served (sim/profiles.yaml). Once evaluation's stats flag it
for over-counting, the tenant pays the fleet's true usage to the micro-unit, never more than the gateway's
hold, and the over-count's cost is booked as a provider dispute (docs/billing.md, "Over-counting providers").
"""

from __future__ import annotations

import time
from typing import Any

import openai
import orjson
import pytest
import redis
import requests
from rest_framework.test import APIClient

from catalog.models import Offering
from contracts.pricing import charge_micros
from contracts.redis_keys import tenant_available
from contracts.snapshot import OfferingStats, StatsSnapshot
from contracts.usage import Prices, Tokens, cost_micros
from evaluation.services.snapshot import snapshot_publish
from metering.consumer import UsageConsumer
from metering.ledger import tenant_account_balance
from metering.models import AccountKind, Balance, JournalLine, UsageRecord
from metering.reconcile import check_balances_match_ledger, check_journals_balance
from metering.services import balance_topup, tenant_available_ensure
from sim.server import SimHandle
from tests.factories import issue_key
from tests.metering.conftest import tenant_stream
from tests.routing.harness import ServerThread
from tests.waiting import wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.adversarial]
RESELLER, MODEL = "bargain-cloud", "deepseek-v3.2"
FUNDS = 50_000_000


def _flag_reseller(redis_client: redis.Redis, gateway: ServerThread) -> Offering:
    """What evaluation publishes once its price probes caught the over-count (factor 1.15)."""
    offering = Offering.objects.get(provider__slug=RESELLER, model__slug=MODEL)
    stats = OfferingStats(offering_id=offering.pk, n=40, flags=("token_overcount",), price_n=40, overcount_factor=1.15)
    snapshot = StatsSnapshot(version=0, generated_at=time.time(), window="1h", stats={"all": {str(offering.pk): stats}})
    version = snapshot_publish(client=redis_client, snapshot=snapshot)
    catalog = gateway.gateway.catalog
    wait_until(
        lambda: catalog.stats is not None and catalog.stats.version == version,
        timeout=5,
        message="the gateway reads the stats snapshot",
    )
    return offering


def _ask(client: openai.OpenAI, n: int, *, stream: bool) -> str:
    body: dict[str, Any] = {"provider": {"only": [RESELLER]}}
    messages: Any = [{"role": "user", "content": f"Explain invoice number {n} in a few sentences, please."}]
    if not stream:
        raw = client.chat.completions.with_raw_response.create(
            model=MODEL, messages=messages, extra_body=body, max_tokens=120
        )
        return raw.headers["x-request-id"]
    streamed = client.chat.completions.with_raw_response.create(
        model=MODEL,
        messages=messages,
        stream=True,
        stream_options={"include_usage": True},
        extra_body=body,
        max_tokens=120,
    )
    for _ in streamed.parse():
        pass
    return streamed.headers["x-request-id"]


def _true_usage(fleet: SimHandle) -> dict[str, int]:
    [entry] = requests.get(f"{fleet.base_url}/_sim/requests?provider={RESELLER}&limit=1", timeout=5).json()["requests"]
    truth: dict[str, int] = entry["sim"]["true_usage"]
    return truth


def _tokens(usage: dict[str, int]) -> Tokens:
    cached = usage["cache_read"] + usage["cache_write_5m"] + usage["cache_write_1h"]
    return Tokens(
        usage["input_total"] - cached,
        usage["cache_read"],
        usage["cache_write_5m"],
        usage["cache_write_1h"],
        usage["output"],
        usage["reasoning"],
    )


def _holds(redis_client: redis.Redis, tenant_id: int) -> dict[str, int]:
    entries: Any = redis_client.xrange(tenant_stream(tenant_id))
    events = [orjson.loads(fields[b"e"]) for _id, fields in entries]
    return {event["request_id"]: int(event["hold_micros"]) for event in events}


def test_the_dishonest_reseller_is_paid_its_count_but_the_tenant_pays_the_true_one(
    billing_gateway, billing_fleet, tenant, redis_client
):
    gateway, fleet = billing_gateway, billing_fleet
    offering = _flag_reseller(redis_client, gateway)
    balance_topup(tenant=tenant, amount_micros=FUNDS, idempotency_key="topup:reseller", source="promotion")
    tenant_available_ensure(tenant=tenant)
    _key, plaintext = issue_key(tenant)
    client = openai.OpenAI(base_url=f"{gateway.base_url}/v1", api_key=plaintext, max_retries=0, timeout=20)
    truths = {}
    for n in range(4):
        rid = _ask(client, n, stream=bool(n % 2))
        truths[rid] = _tokens(_true_usage(fleet))
    holds = _holds(redis_client, tenant.pk)
    consumer = UsageConsumer(client=redis_client, name="true-usage", after_batch=lambda _: None)
    wait_until(
        lambda: (
            consumer.run(until=time.monotonic() + 0.2, block_ms=50) >= 0 and UsageRecord.objects.count() >= len(truths)
        ),
        timeout=10,
        message="usage ingested",
    )

    prices = Prices(**offering_prices(offering))
    paid = disputed = 0
    for rid, true in truths.items():
        record = UsageRecord.objects.get(request_id=rid)
        assert record.offering_id == offering.pk and "provider_overcount" in record.flags
        recorded = Tokens(
            record.input_uncached,
            record.cache_read,
            record.cache_write_5m,
            record.cache_write_1h,
            record.output,
            record.reasoning,
        )
        assert recorded == true
        expected = charge_micros(cost_micros=cost_micros(true, prices), markup_bps=0, byok=False)
        assert record.charge_micros == expected <= holds[rid]
        # billed >= served: an answer cut at its max_tokens had its over-reported output clamped by the
        # gateway already (booked at the allowance), so only what the provider inflated beyond it is disputed
        assert record.cost_micros >= record.computed_cost_micros == cost_micros(true, prices)
        over = record.cost_micros - record.computed_cost_micros
        disputes = JournalLine.objects.filter(
            journal__key=f"provider_dispute:{rid}", account__kind=AccountKind.PROVIDER_DISPUTE
        )
        assert [line.amount_micros for line in disputes] == ([over] if over else [])
        disputed += over
        paid += expected
    assert tenant_account_balance(tenant_id=tenant.pk) == FUNDS - paid
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    rid, true = next(iter(truths.items()))
    shown = api.get("/api/v1/generation", {"id": rid}).json()  # what the tenant sees of the call
    assert shown["charge_micros"] == UsageRecord.objects.get(request_id=rid).charge_micros
    assert shown["tokens"]["output"] == true.output, shown
    wait_until(
        lambda: int(redis_client.get(tenant_available(tenant.pk))) == FUNDS - paid,
        timeout=5,
        message="the gateway's counter is back at the true charge",
    )
    dispute_balance = Balance.objects.get(account__tenant=None, account__kind=AccountKind.PROVIDER_DISPUTE)
    assert dispute_balance.amount_micros == disputed > 0
    assert check_journals_balance() == [] and check_balances_match_ledger() == []


def offering_prices(offering: Offering) -> dict[str, int]:
    record = UsageRecord.objects.filter(offering_id=offering.pk).values_list("prices", flat=True).first()
    assert isinstance(record, dict)
    return record
