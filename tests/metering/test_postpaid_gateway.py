"""The postpaid switch seen through the real gateway, localstripe, the meter emulator and PostgreSQL.

A tenant without funds is refused by the gateway; a PATCH to postpaid without a card is refused and changes
nothing the gateway sees; with a card (``POST .../billing/postpaid``) the next call is answered and its charge
reaches Stripe's meter for the tenant's customer (docs/billing.md, "Postpaid: a card on file").
"""

from __future__ import annotations

import time
from typing import Any

import openai
import pytest

from contracts.redis_keys import tenant_available
from metering.consumer import UsageConsumer
from metering.ledger import tenant_account_balance
from metering.models import MeterEvent, MeterStatus, UsageRecord
from metering.reconcile import check_balances_match_ledger, check_journals_balance, check_meter_events_unsent
from metering.services import tenant_available_ensure
from metering.stripe.meter_push import meter_events_push
from tenants.models import Tenant
from tests.factories import MembershipFactory, issue_key
from tests.metering.conftest import emulator_totals
from tests.waiting import wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.adversarial]
CREDIT = 2_000_000


def _call(client: openai.OpenAI) -> Any:
    messages: Any = [{"role": "user", "content": "Bill me later, please."}]
    return client.chat.completions.with_raw_response.create(model="deepseek-v4-flash", messages=messages, max_tokens=40)


def test_postpaid_switch_through_the_gateway_bills_through_stripes_meter(
    billing_gateway, tenant, redis_client, api_client_for, localstripe, meter_emulator
):
    Tenant.objects.filter(pk=tenant.pk).update(credit_limit_micros=CREDIT)  # staff-set
    tenant.refresh_from_db()
    tenant_available_ensure(tenant=tenant)
    _key, plaintext = issue_key(tenant)
    client = openai.OpenAI(base_url=f"{billing_gateway.base_url}/v1", api_key=plaintext, max_retries=0, timeout=20)
    with pytest.raises(openai.APIStatusError) as refused:
        _call(client)
    assert refused.value.status_code == 402  # prepaid, nothing on the balance

    owner = api_client_for(MembershipFactory(tenant=tenant, role="billing"))
    response = owner.patch("/api/v1/tenants/acme/", {"billing_mode": "postpaid"}, format="json")
    assert response.status_code == 409 and response.json()["error"]["code"] == "payment_method_required"
    assert Tenant.objects.get(pk=tenant.pk).billing_mode == "prepaid"
    assert int(redis_client.get(tenant_available(tenant.pk))) == 0  # the gateway lends nothing
    with pytest.raises(openai.APIStatusError) as still_refused:
        _call(client)
    assert still_refused.value.status_code == 402

    response = owner.post("/api/v1/tenants/acme/billing/postpaid", {"payment_method": "pm_card_visa"}, format="json")
    assert response.status_code == 200, response.content
    answered = _call(client)
    request_id = answered.headers["x-request-id"]
    consumer = UsageConsumer(client=redis_client, name="postpaid-gateway", after_batch=lambda _: None)
    wait_until(
        lambda: (
            consumer.run(until=time.monotonic() + 0.2, block_ms=50) >= 0
            and UsageRecord.objects.filter(request_id=request_id).exists()
        ),
        timeout=10,
        message="the postpaid call is ingested",
    )
    charge = UsageRecord.objects.get(request_id=request_id).charge_micros
    assert charge > 0
    assert tenant_account_balance(tenant_id=tenant.pk) == -charge  # owed
    assert meter_events_push().sent == 1
    customer = Tenant.objects.get(pk=tenant.pk).stripe_customer_id
    assert MeterEvent.objects.get(identifier=request_id).status == MeterStatus.SENT
    assert emulator_totals(meter_emulator)["customers"] == {customer: charge}
    assert check_meter_events_unsent() == []
    assert check_journals_balance() == [] and check_balances_match_ledger() == []
