"""A hedged call through the real gateway, the simulated fleet and the metering consumer: the tenant
pays once, for the answer it got; the cancelled attempt is booked as provider cost only."""

from __future__ import annotations

import time

import pytest
import requests

from metering.consumer import UsageConsumer
from metering.ledger import tenant_account_balance
from metering.models import AccountKind, JournalLine, UsageRecord
from metering.reconcile import check_usage_has_journal
from metering.services import balance_topup, tenant_available_ensure
from routing.hedging.loser import LOSER_SUFFIX
from tests.factories import issue_key
from tests.routing.conftest import add_fault, sim  # noqa: F401 - the fleet fixture
from tests.routing.test_hedging import STALL_SIM_S, hedging_gateway  # noqa: F401 - the gateway fixture

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.cluster]


def _ingest(redis_client, expected: int) -> None:
    consumer = UsageConsumer(client=redis_client, name="hedge-test", after_batch=lambda _: None)
    deadline = time.monotonic() + 10
    while UsageRecord.objects.count() < expected and time.monotonic() < deadline:
        consumer.run(until=time.monotonic() + 0.3, block_ms=50)
    assert UsageRecord.objects.count() == expected


def test_the_tenant_pays_the_answer_once_and_the_cancelled_attempt_is_provider_cost_only(
    hedging_gateway,  # noqa: F811 - the fixture's value, not the import
    sim,  # noqa: F811 - the fixture's value, not the import
    tenant,
    redis_client,
):
    balance_topup(tenant=tenant, amount_micros=5_000_000, idempotency_key="topup:hedge", source="stripe")
    tenant_available_ensure(tenant=tenant)
    _, plaintext = issue_key(tenant, name="hedged")
    add_fault(sim, provider="openai", kind="stall_before_first_token", count=1, stall_s=STALL_SIM_S)
    body = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 5, "stream": True,
            "provider": {"order": ["openai", "openrouter"]}}  # fmt: skip
    answer = requests.post(
        f"{hedging_gateway.base_url}/v1/chat/completions",
        json=body,
        timeout=30,
        headers={"authorization": f"Bearer {plaintext}"},
    )
    assert answer.status_code == 200 and "+hedge" in answer.headers["x-tokenway-route"], answer.text
    _ingest(redis_client, 2)
    call = UsageRecord.objects.get(request_id=answer.headers["x-request-id"])
    loser = UsageRecord.objects.get(request_id=answer.headers["x-request-id"] + LOSER_SUFFIX)
    assert (call.end_state, loser.end_state) == ("completed", "hedge_cancelled")
    assert call.charge_micros > 0 and loser.charge_micros == 0 and loser.cost_micros > 0
    assert tenant_account_balance(tenant_id=tenant.pk) == 5_000_000 - call.charge_micros
    booked = JournalLine.objects.filter(
        journal__key=f"usage:{loser.request_id}", account__kind=AccountKind.PROVIDER_COST
    )
    assert [line.amount_micros for line in booked] == [loser.cost_micros]  # what we owe the provider for it
    assert check_usage_has_journal() == []
