"""Settlement beyond a hold never pushes a prepaid balance below zero: the rest is the platform's shortfall."""

from __future__ import annotations

import pytest
from django.db import transaction
from django.utils import timezone
from psycopg.errors import CheckViolation

from contracts.redis_keys import tenant_available
from metering.ingest import usage_ingest
from metering.ledger import JournalSpec, journals_post, tenant_account_balance
from metering.models import AccountKind, Balance, Journal, JournalLine, ReconciliationFinding
from metering.reconcile import check_journals_balance, check_prepaid_not_negative
from metering.services import balance_topup, tenant_available_ensure
from tests.metering.conftest import make_event

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.cluster, pytest.mark.local_servers]


def _fund(tenant, micros: int) -> None:
    tenant_available_ensure(tenant=tenant)
    balance_topup(tenant=tenant, amount_micros=micros, idempotency_key=f"promo:{tenant.pk}", source="promotion")


def _platform(kind: str) -> int:
    return int(
        Balance.objects.filter(account__tenant=None, account__kind=kind).values_list("amount_micros", flat=True).first()
        or 0
    )


def test_usage_beyond_a_prepaid_balance_stops_at_zero_and_books_the_rest_to_hold_shortfall(tenant, redis_client):
    _fund(tenant, 3_000)
    event = make_event(tenant.pk, request_id="req_over")
    assert event.charge_micros == 5_200
    redis_client.decrby(tenant_available(tenant.pk), 5_200)  # what the gateway's settle already took
    usage_ingest(events=[event])
    assert tenant_account_balance(tenant_id=tenant.pk) == 0
    assert _platform(AccountKind.HOLD_SHORTFALL) == -2_200
    assert tenant_account_balance(tenant_id=tenant.pk, kind=AccountKind.SPENT) == 5_200
    lines = JournalLine.objects.filter(journal__key="usage:req_over")
    assert sum(line.amount_micros for line in lines) == 0
    assert check_journals_balance() == []
    finding = ReconciliationFinding.objects.get(check_name="hold_shortfall")
    assert finding.severity == "error" and finding.subject == "usage:req_over"
    assert finding.detail == {"tenant_id": tenant.pk, "charge_micros": 5_200, "paid_micros": 3_000,
                              "shortfall_micros": 2_200}  # fmt: skip
    assert int(redis_client.get(tenant_available(tenant.pk))) == 0  # the gateway's counter agrees with the ledger


def test_a_batch_pays_in_order_until_the_balance_is_spent(tenant, redis_client):
    _fund(tenant, 12_000)
    events = [make_event(tenant.pk, request_id=f"req_{n}") for n in range(3)]  # 5,200 each
    usage_ingest(events=events)
    assert tenant_account_balance(tenant_id=tenant.pk) == 0
    assert _platform(AccountKind.HOLD_SHORTFALL) == -(3 * 5_200 - 12_000)
    assert ReconciliationFinding.objects.filter(check_name="hold_shortfall").count() == 1
    assert Journal.objects.filter(kind="usage").count() == 3


def test_postpaid_usage_is_owed_not_clamped(tenant, redis_client):
    tenant.billing_mode, tenant.credit_limit_micros = "postpaid", 1_000_000
    tenant.save()
    usage_ingest(events=[make_event(tenant.pk, request_id="req_post")])
    assert tenant_account_balance(tenant_id=tenant.pk) == -5_200
    assert not ReconciliationFinding.objects.exists()


def test_the_database_refuses_a_debit_below_zero_on_a_prepaid_balance(tenant, redis_client):
    _fund(tenant, 1_000)
    spec = JournalSpec(
        key="manual:overdraw",
        kind="adjustment",
        tenant_id=tenant.pk,
        lines=[((tenant.pk, AccountKind.AVAILABLE), -1_001), ((None, AccountKind.PROMOTIONS), 1_001)],
    )
    with pytest.raises(CheckViolation, match="prepaid balance"), transaction.atomic():
        journals_post(specs=[spec], at=timezone.now())
    assert tenant_account_balance(tenant_id=tenant.pk) == 1_000
    assert not Journal.objects.filter(key="manual:overdraw").exists()


def test_an_old_negative_prepaid_balance_may_be_credited_and_is_reported(tenant, redis_client):
    tenant.billing_mode = "postpaid"
    tenant.save()
    usage_ingest(events=[make_event(tenant.pk, request_id="req_owed")])  # owed while postpaid
    tenant.billing_mode = "prepaid"
    tenant.save()
    assert [f.check for f in check_prepaid_not_negative()] == ["prepaid_balance_negative"]
    balance_topup(tenant=tenant, amount_micros=1_000, idempotency_key="promo:partial", source="promotion")
    assert tenant_account_balance(tenant_id=tenant.pk) == -4_200  # a credit that leaves it negative passes
    usage_ingest(events=[make_event(tenant.pk, request_id="req_more")])
    assert tenant_account_balance(tenant_id=tenant.pk) == -4_200  # a debit does not: all of it is shortfall
    assert _platform(AccountKind.HOLD_SHORTFALL) == -5_200
