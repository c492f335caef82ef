"""metering.selectors: what each read returns for its tenant, for another tenant, with nothing yet, and at
the edges of its window (start included, end excluded)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from contracts.redis_keys import generation
from contracts.usage import Tokens
from metering.ingest import usage_ingest
from metering.models import MeterEvent, MeterStatus, Notification, ReconciliationFinding, SpendAlert, TopUp
from metering.selectors import (
    BadCursor,
    GenerationFilter,
    billing_latency,
    cache_savings_micros,
    findings_open,
    generation_get,
    generations_list,
    key_summary,
    ledger_totals,
    platform_overview,
    stripe_sync_status,
    tenant_balance_micros,
    tenant_invoices,
    tenant_month_spend_micros,
    tenant_notifications,
    tenant_spend_alerts,
    tenant_topup_get,
    tenant_topups,
    tenant_usage,
)
from metering.services import balance_topup
from tests.factories import issue_key
from tests.metering.conftest import make_event

pytestmark = [pytest.mark.django_db, pytest.mark.local_servers]

T0 = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)  # a fixed hour inside a month, far from its edges
WINDOW = {"start": T0, "end": T0 + timedelta(hours=1)}
PLAIN = Tokens(input_uncached=1000, output=100)  # no cache reads: nothing saved


def _at(moment: datetime, **extra):
    return {"finished_at": moment.timestamp(), "started_at": moment.timestamp() - 1, **extra}


def _ingest(tenant_id: int, moment: datetime = T0, **extra) -> str:
    event = make_event(tenant_id, **_at(moment, **extra))
    usage_ingest(events=[event])
    return event.request_id


# generation_get, generations_list


def test_generation_get_is_the_owners_record_and_none_for_another_tenant(tenant, other_tenant):
    request_id = _ingest(tenant.pk)
    found = generation_get(tenant_id=tenant.pk, request_id=request_id)
    assert found is not None and (found["id"], found["ingested"], found["status"]) == (request_id, True, "ok")
    assert generation_get(tenant_id=other_tenant.pk, request_id=request_id) is None
    assert generation_get(tenant_id=tenant.pk, request_id="req_unknown") is None


def test_generation_get_reads_the_gateways_copy_until_ingested_for_its_tenant_only(tenant, other_tenant, redis_client):
    event = make_event(tenant.pk, request_id="req_in_flight")
    redis_client.set(generation(event.request_id), event.to_json())
    found = generation_get(tenant_id=tenant.pk, request_id="req_in_flight")
    assert found is not None and (found["ingested"], found["charge_micros"]) == (False, event.charge_micros)
    assert generation_get(tenant_id=other_tenant.pk, request_id="req_in_flight") is None


def test_generations_list_pages_newest_first_over_the_tenants_rows_only(tenant, other_tenant):
    ours = [_ingest(tenant.pk, T0 + timedelta(seconds=n)) for n in range(3)]
    _ingest(other_tenant.pk, T0 + timedelta(seconds=9))
    first = generations_list(tenant_id=tenant.pk, limit=2)
    assert [g["id"] for g in first.data] == [ours[2], ours[1]] and first.has_more
    rest = generations_list(tenant_id=tenant.pk, limit=2, cursor=first.next_cursor)
    assert [g["id"] for g in rest.data] == [ours[0]] and rest.next_cursor is None


def test_generations_list_filters_and_is_empty_for_a_tenant_without_requests(tenant, other_tenant):
    _ingest(tenant.pk, T0)
    rejected = _ingest(tenant.pk, T0 + timedelta(seconds=1), status="rejected", cost_micros=0, charge_micros=0)
    assert [g["id"] for g in generations_list(tenant_id=tenant.pk, where=GenerationFilter(status="rejected")).data] == [
        rejected
    ]
    window = GenerationFilter(since=T0 + timedelta(seconds=1), until=T0 + timedelta(seconds=2))
    assert [g["id"] for g in generations_list(tenant_id=tenant.pk, where=window).data] == [rejected]
    empty = generations_list(tenant_id=other_tenant.pk)
    assert (empty.data, empty.next_cursor) == ([], None)


def test_generations_list_refuses_a_cursor_it_did_not_make(tenant):
    with pytest.raises(BadCursor):
        generations_list(tenant_id=tenant.pk, cursor="not-a-cursor")


# key_summary, tenant_month_spend_micros, tenant_balance_micros


def test_key_summary_counts_this_key_this_month_and_the_tenants_balance(tenant):
    tenant.billing_mode = "postpaid"  # owed: a prepaid balance stops at zero since issue 12 (test_shortfall)
    tenant.save()
    key, _ = issue_key(tenant, rpm_limit=60)
    other_key, _ = issue_key(tenant, name="other")
    now = timezone.now()
    spent = make_event(tenant.pk, key.pk, **_at(now)).charge_micros
    usage_ingest(events=[make_event(tenant.pk, key.pk, **_at(now)), make_event(tenant.pk, other_key.pk, **_at(now))])
    summary = key_summary(api_key=key)
    assert summary["key"]["spend_this_month_micros"] == spent
    assert summary["key"]["limits"]["rpm"] == 60
    assert summary["tenant"]["spend_this_month_micros"] == 2 * spent
    assert summary["tenant"]["balance_micros"] == -2 * spent  # prepaid with no top-up: the charges are owed


def test_month_spend_starts_at_the_first_of_the_month(tenant, other_tenant):
    first = datetime(2026, 3, 1, tzinfo=UTC)
    _ingest(tenant.pk, first - timedelta(seconds=1))  # February
    charge = make_event(tenant.pk).charge_micros
    _ingest(tenant.pk, first)
    assert tenant_month_spend_micros(tenant_id=tenant.pk, now=T0) == charge
    assert tenant_month_spend_micros(tenant_id=other_tenant.pk, now=T0) == 0


def test_balance_is_the_tenants_available_account(tenant, other_tenant):
    assert tenant_balance_micros(tenant_id=tenant.pk) == 0
    balance_topup(tenant=tenant, amount_micros=5_000_000, idempotency_key="promo:1", source="promotion")
    assert tenant_balance_micros(tenant_id=tenant.pk) == 5_000_000
    assert tenant_balance_micros(tenant_id=other_tenant.pk) == 0


# tenant_usage, platform_overview, cache_savings_micros


def test_tenant_usage_counts_the_window_start_but_not_its_end_nor_rejected_calls(tenant, other_tenant):
    _ingest(tenant.pk, T0, tokens=PLAIN)
    _ingest(tenant.pk, T0 + timedelta(hours=1), tokens=PLAIN)  # the end: next window's
    _ingest(tenant.pk, T0 - timedelta(microseconds=1), tokens=PLAIN)
    _ingest(tenant.pk, T0, tokens=PLAIN, status="rejected", cost_micros=0, charge_micros=0)
    _ingest(other_tenant.pk, T0, tokens=PLAIN, model="glm-5.1")
    rows = tenant_usage(tenant_id=tenant.pk, group="model", **WINDOW)
    assert [(r["model"], r["requests"], r["input_tokens"], r["output_tokens"]) for r in rows] == [
        ("deepseek-v4-flash", 1, 1000, 100)
    ]
    everyone = tenant_usage(tenant_id=None, group="model", **WINDOW)
    assert [(r["model"], r["requests"]) for r in everyone] == [("deepseek-v4-flash", 1), ("glm-5.1", 1)]
    assert tenant_usage(tenant_id=other_tenant.pk, group="day", **WINDOW)[0]["day"] == "2026-03-10"


def test_tenant_usage_is_empty_without_requests(tenant):
    assert tenant_usage(tenant_id=tenant.pk, group="provider", **WINDOW) == []


def test_platform_overview_is_zero_when_empty_and_sums_tenants_in_the_window(tenant, other_tenant):
    empty = platform_overview(**WINDOW)
    assert (empty["requests"], empty["revenue_micros"], empty["margin_bps"], empty["per_tenant"]) == (0, 0, 0, [])
    _ingest(tenant.pk, T0, markup_bps=2_000)
    _ingest(other_tenant.pk, T0 + timedelta(minutes=59), markup_bps=2_000)
    _ingest(other_tenant.pk, T0 + timedelta(hours=1), markup_bps=2_000)
    cost = make_event(tenant.pk).cost_micros
    overview = platform_overview(**WINDOW)
    assert (overview["requests"], overview["provider_cost_micros"]) == (2, 2 * cost)
    assert overview["margin_micros"] == overview["revenue_micros"] - 2 * cost > 0
    assert overview["margin_bps"] == overview["margin_micros"] * 10_000 // overview["revenue_micros"]
    assert sorted(t["name"] for t in overview["per_tenant"]) == ["acme", "globex"]


def test_cache_savings_count_cache_reads_of_the_tenant_in_the_window(tenant, other_tenant):
    _ingest(tenant.pk, T0)  # make_event's default tokens read 800 from the cache
    _ingest(tenant.pk, T0 + timedelta(hours=1))
    saved = cache_savings_micros(tenant_id=tenant.pk, **WINDOW)
    assert saved > 0
    assert cache_savings_micros(**WINDOW) == saved
    assert cache_savings_micros(tenant_id=other_tenant.pk, **WINDOW) == 0
    _ingest(other_tenant.pk, T0, tokens=PLAIN)
    assert cache_savings_micros(tenant_id=other_tenant.pk, **WINDOW) == 0


# ledger_totals, stripe_sync_status, billing_latency, findings_open (operators)


def test_ledger_totals_are_zero_when_empty_and_follow_credits_and_usage(tenant):
    assert set(ledger_totals().values()) == {0}
    balance_topup(tenant=tenant, amount_micros=10_000_000, idempotency_key="topup:pi_9", source="stripe")
    charge = make_event(tenant.pk).charge_micros
    _ingest(tenant.pk)
    totals = ledger_totals()
    assert totals["stripe_received_micros"] == 10_000_000
    assert totals["tenant_funds_micros"] == 10_000_000 - charge
    assert totals["revenue_micros"] == charge


def test_stripe_sync_status_counts_the_meter_outbox(tenant):
    assert stripe_sync_status() == {"pending": 0, "lag_seconds": 0.0, "failing": 0, "expired": 0, "sent_last_hour": 0}
    now = timezone.now()
    common = {"tenant": tenant, "customer_id": "cus_1", "value": 1, "timestamp": now}
    MeterEvent.objects.create(identifier="m1", created_at=now - timedelta(minutes=2), **common)
    MeterEvent.objects.create(identifier="m2", created_at=now, last_error="503", **common)
    MeterEvent.objects.create(identifier="m3", created_at=now, status=MeterStatus.SENT, sent_at=now, **common)
    MeterEvent.objects.create(identifier="m4", created_at=now, status=MeterStatus.EXPIRED, **common)
    status = stripe_sync_status()
    assert (status["pending"], status["failing"], status["expired"], status["sent_last_hour"]) == (2, 1, 1, 1)
    assert 110 <= status["lag_seconds"] <= 180


def test_billing_latency_is_none_without_ingestion_and_measured_since(tenant):
    assert set(billing_latency().values()) == {None}
    _ingest(tenant.pk, timezone.now() - timedelta(seconds=2))
    latency = billing_latency(since=timezone.now() - timedelta(minutes=1))
    assert 1_000 <= latency["ledger_p50_ms"] <= 60_000
    assert latency["stripe_p50_ms"] is None
    assert set(billing_latency(since=timezone.now() + timedelta(seconds=1)).values()) == {None}


def test_findings_open_lists_unresolved_newest_first_up_to_the_limit():
    assert findings_open() == []
    now = timezone.now()
    for n, resolved in enumerate([None, None, now]):
        ReconciliationFinding.objects.create(
            run_at=now - timedelta(minutes=n), check_name=f"c{n}", severity="error", resolved_at=resolved
        )
    assert [f["check"] for f in findings_open()] == ["c0", "c1"]
    assert [f["check"] for f in findings_open(limit=1)] == ["c0"]


# the console's billing page: top-ups, alerts, notifications, invoices


def test_topups_of_the_tenant_newest_first_and_not_another_tenants(tenant, other_tenant):
    older = TopUp.objects.create(tenant=tenant, amount_micros=5_000_000)
    newer = TopUp.objects.create(tenant=tenant, amount_micros=7_000_000)
    theirs = TopUp.objects.create(tenant=other_tenant, amount_micros=9_000_000)
    assert list(tenant_topups(tenant_id=tenant.pk)) == [newer, older]
    assert list(tenant_topups(tenant_id=tenant.pk, limit=1)) == [newer]
    assert tenant_topup_get(tenant_id=tenant.pk, topup_id=older.pk) == older
    assert tenant_topup_get(tenant_id=tenant.pk, topup_id=theirs.pk) is None
    assert list(tenant_topups(tenant_id=other_tenant.pk)) == [theirs]


def test_spend_alerts_by_threshold_and_notifications_newest_first_per_tenant(tenant, other_tenant):
    high = SpendAlert.objects.create(tenant=tenant, threshold_micros=50_000_000)
    low = SpendAlert.objects.create(tenant=tenant, threshold_micros=10_000_000)
    SpendAlert.objects.create(tenant=other_tenant, threshold_micros=1_000_000)
    assert list(tenant_spend_alerts(tenant_id=tenant.pk)) == [low, high]
    notes = [Notification.objects.create(tenant=tenant, kind="spend_alert", message=f"n{n}") for n in range(12)]
    assert list(tenant_notifications(tenant_id=tenant.pk)) == notes[::-1][:10]
    assert not tenant_notifications(tenant_id=other_tenant.pk).exists()


def test_invoices_are_the_paid_stripe_invoices_with_their_hosted_page(tenant, other_tenant):
    assert tenant_invoices(tenant_id=tenant.pk) == []
    url = "https://invoice.stripe.com/i/acct_1/test_abc"
    balance_topup(tenant=tenant, amount_micros=12_340_000, idempotency_key="invoice:in_1", source="invoice", memo=url)
    balance_topup(tenant=tenant, amount_micros=5_000_000, idempotency_key="invoice:in_2", source="invoice")
    balance_topup(tenant=tenant, amount_micros=9_000_000, idempotency_key="topup:pi_1", source="stripe")  # not one
    invoices = tenant_invoices(tenant_id=tenant.pk)
    assert [(i["number"], i["amount_micros"], i["status"], i["url"]) for i in invoices] == [
        ("in_2", 5_000_000, "paid", None),
        ("in_1", 12_340_000, "paid", url),
    ]
    assert all(isinstance(i["paid_at"], datetime) for i in invoices)
    assert tenant_invoices(tenant_id=other_tenant.pk) == []
    assert len(tenant_invoices(tenant_id=tenant.pk, limit=1)) == 1


def test_an_invoice_memo_that_is_not_an_https_url_gives_no_link(tenant):
    balance_topup(
        tenant=tenant, amount_micros=1_000_000, idempotency_key="invoice:in_3", source="invoice", memo="javascript:x"
    )
    assert tenant_invoices(tenant_id=tenant.pk)[0]["url"] is None
