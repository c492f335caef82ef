"""Tenants pay for true usage (docs/billing.md, "Over-counting providers: the tenant pays the true count").

An offering the published stats flag ``token_overcount`` (factor 1.15) reports 15% more uncached input,
output and reasoning than it served: at ingest the tenant is charged on the true count, the provider cost is
booked as the provider bills it and the difference's cost as a provider dispute, once per request id.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace

import pytest

from contracts.pricing import charge_micros
from contracts.redis_keys import tenant_available
from contracts.snapshot import OfferingStats, StatsSnapshot
from contracts.usage import Tokens, cost_micros
from evaluation.services.snapshot import snapshot_publish
from metering.ingest import usage_ingest
from metering.ledger import tenant_account_balance
from metering.models import AccountKind, Balance, JournalLine, MeterEvent, UsageRecord
from metering.provider_truth import true_tokens
from metering.reconcile import check_balances_match_ledger, check_journals_balance
from metering.services import balance_topup, tenant_available_ensure
from tenants.services import tenant_update
from tests.metering.conftest import PRICES, make_event

pytestmark = pytest.mark.django_db(transaction=True)
OVERCOUNTING, HONEST = 7, 8  # offering ids
FACTOR = 1.15
TRUE = Tokens(input_uncached=1_000, cache_read=800, output=300, reasoning=50)
FUNDS = 1_000_000


def _inflated(tokens: Tokens, factor: float = FACTOR) -> Tokens:
    """What the simulated dishonest reseller reports (sim.usage.SimUsage.inflated)."""
    return replace(
        tokens,
        input_uncached=math.ceil(tokens.input_uncached * factor),
        output=math.ceil(tokens.output * factor),
        reasoning=math.ceil(tokens.reasoning * factor),
    )


def _publish(redis_client, **stats: OfferingStats) -> None:
    snapshot = StatsSnapshot(version=0, generated_at=time.time(), window="1h", stats={"all": stats})
    snapshot_publish(client=redis_client, snapshot=snapshot)


def _flag(offering_id: int, factor: float = FACTOR) -> OfferingStats:
    return OfferingStats(offering_id=offering_id, n=40, flags=("token_overcount",), price_n=40, overcount_factor=factor)


@pytest.fixture
def funded(tenant, redis_client):
    balance_topup(tenant=tenant, amount_micros=FUNDS, idempotency_key="topup:truth", source="promotion")
    tenant_available_ensure(tenant=tenant)
    _publish(redis_client, **{str(OVERCOUNTING): _flag(OVERCOUNTING)})
    return tenant


def _settled_by_gateway(redis_client, tenant, charge: int) -> None:
    redis_client.decrby(tenant_available(tenant.pk), charge)  # what the gateway's settle did with its own count


def _line(key: str, kind: str) -> int:
    return int(JournalLine.objects.get(journal__key=key, account__kind=kind).amount_micros)


def _platform(kind: str) -> int:
    rows = Balance.objects.filter(account__tenant=None, account__kind=kind).values_list("amount_micros", flat=True)
    return int(rows.first() or 0)


@pytest.mark.parametrize("true", [TRUE, Tokens(7, 0, 0, 0, 1, 0), Tokens(20, 3, 0, 0, 100, 99), Tokens(0, 9, 0, 0, 0)])
def test_the_true_count_is_recovered_exactly_from_the_sims_inflation(true):
    from fractions import Fraction

    assert true_tokens(_inflated(true), Fraction("1.15")) == true


def test_output_the_gateway_clamped_is_not_divided_again():
    """A call capped at 120 output tokens, reported as 138 by a 1.15x over-counter: the gateway books 120 and
    says it cut 18; the true count is 138 / 1.15 = 120, not 120 / 1.15 = 104."""
    from fractions import Fraction

    clamped = Tokens(50, 0, 0, 0, 120, 0)
    assert true_tokens(clamped, Fraction("1.15"), clamped_output=18).output == 120
    assert true_tokens(clamped, Fraction("1.15"), clamped_output=0).output == 104  # nothing cut: all inflated
    assert true_tokens(clamped, Fraction("1.15"), clamped_output=500).output == 120  # never above the clamp


def test_a_flagged_provider_is_charged_on_the_true_count_and_the_difference_disputed(funded, redis_client):
    reported = _inflated(TRUE)
    event = make_event(funded.pk, request_id="req_over", offering_id=OVERCOUNTING, tokens=reported)
    _settled_by_gateway(redis_client, funded, event.charge_micros)
    usage_ingest(events=[event])
    true_cost, reported_cost = cost_micros(TRUE, PRICES), cost_micros(reported, PRICES)
    assert reported_cost > true_cost
    record = UsageRecord.objects.get(request_id="req_over")
    assert (record.input_uncached, record.output, record.reasoning, record.cache_read) == (1_000, 300, 50, 800)
    assert record.charge_micros == true_cost and record.computed_cost_micros == true_cost
    assert record.cost_micros == reported_cost  # what the provider will bill us
    assert "provider_overcount" in record.flags
    assert _line("usage:req_over", AccountKind.AVAILABLE) == -true_cost
    assert _line("usage:req_over", AccountKind.PROVIDER_COST) == reported_cost
    assert _line("provider_dispute:req_over", AccountKind.PROVIDER_DISPUTE) == reported_cost - true_cost
    assert _line("provider_dispute:req_over", AccountKind.PROVIDER_COST) == -(reported_cost - true_cost)
    assert _platform(AccountKind.PROVIDER_COST) == true_cost  # our expense is what was really served
    assert _platform(AccountKind.PROVIDER_PAYABLE) == -reported_cost  # the provider still invoices its count
    assert tenant_account_balance(tenant_id=funded.pk) == FUNDS - true_cost
    assert int(redis_client.get(tenant_available(funded.pk))) == FUNDS - true_cost  # the counter got it back
    # Delivered again (a consumer crash, a replay): nothing moves twice.
    usage_ingest(events=[event])
    assert tenant_account_balance(tenant_id=funded.pk) == FUNDS - true_cost
    assert int(redis_client.get(tenant_available(funded.pk))) == FUNDS - true_cost
    assert JournalLine.objects.filter(journal__key="provider_dispute:req_over").count() == 2
    assert check_journals_balance() == [] and check_balances_match_ledger() == []


def test_honest_providers_and_factors_within_tolerance_are_charged_as_reported(funded, redis_client):
    _publish(
        redis_client,
        **{
            str(OVERCOUNTING): _flag(OVERCOUNTING, 1.005),
            str(HONEST): OfferingStats(offering_id=HONEST, n=40, overcount_factor=1.15),
        },
    )
    reported = _inflated(TRUE)
    events = [
        make_event(funded.pk, request_id=f"req_{oid}", offering_id=oid, tokens=reported)
        for oid in (OVERCOUNTING, HONEST)
    ]
    usage_ingest(events=events)
    for record in UsageRecord.objects.all():
        assert record.charge_micros == cost_micros(reported, PRICES) and record.output == reported.output
    assert not JournalLine.objects.filter(account__kind=AccountKind.PROVIDER_DISPUTE).exists()


def test_our_own_estimate_byok_and_an_uncharged_end_state(funded, redis_client):
    reported = _inflated(TRUE)
    estimated = make_event(
        funded.pk, request_id="req_est", offering_id=OVERCOUNTING, tokens=reported, usage_source="estimated"
    )
    byok = make_event(funded.pk, request_id="req_byok", offering_id=OVERCOUNTING, tokens=reported, byok=True)
    cut = make_event(
        funded.pk, request_id="req_cut", offering_id=OVERCOUNTING, tokens=reported, end_state="upstream_cut"
    )
    usage_ingest(events=[estimated, byok, cut])
    assert UsageRecord.objects.get(request_id="req_est").output == reported.output  # our count: nothing to correct
    assert UsageRecord.objects.get(request_id="req_byok").output == reported.output  # the provider bills the tenant
    cut_record = UsageRecord.objects.get(request_id="req_cut")
    assert cut_record.charge_micros == 0 and cut_record.output == TRUE.output
    disputed = cost_micros(reported, PRICES) - cost_micros(TRUE, PRICES)
    assert _line("provider_dispute:req_cut", AccountKind.PROVIDER_DISPUTE) == disputed  # provider cost: still ours


def test_a_postpaid_tenants_meter_event_carries_the_true_charge_with_markup(tenant, redis_client):
    tenant_update(tenant=tenant, billing_mode="postpaid", markup_bps=2_000, stripe_customer_id="cus_true")
    _publish(redis_client, **{str(OVERCOUNTING): _flag(OVERCOUNTING)})
    usage_ingest(
        events=[
            make_event(
                tenant.pk, request_id="req_pp", offering_id=OVERCOUNTING, tokens=_inflated(TRUE), markup_bps=2_000
            )
        ]
    )
    expected = charge_micros(cost_micros=cost_micros(TRUE, PRICES), markup_bps=2_000, byok=False)
    assert MeterEvent.objects.get(identifier="req_pp").value == expected
    assert UsageRecord.objects.get(request_id="req_pp").charge_micros == expected


def test_a_snapshot_published_again_after_redis_was_emptied_is_read_anew(redis_client):
    """Regression: the factors were cached by the snapshot's version, which starts over at 1 in an emptied Redis."""
    from fractions import Fraction

    from metering.provider_truth import overcount_factors

    _publish(redis_client, **{str(OVERCOUNTING): _flag(OVERCOUNTING)})
    assert overcount_factors(redis_client) == {OVERCOUNTING: Fraction(23, 20)}
    redis_client.flushdb()
    _publish(redis_client, **{str(HONEST): _flag(HONEST, 1.2)})  # version 1 again, another document
    assert overcount_factors(redis_client) == {HONEST: Fraction(6, 5)}
    redis_client.flushdb()
    assert overcount_factors(redis_client) == {}
