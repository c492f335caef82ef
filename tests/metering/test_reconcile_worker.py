"""Reconciliation findings, and ingestion through a real Celery worker."""

from __future__ import annotations

import time

import pytest
from celery.contrib.testing.worker import start_worker

from contracts import redis_keys as rk
from metering.holds import hold_place
from metering.ingest import usage_ingest
from metering.models import ReconciliationFinding, TopUp, UsageRecord
from metering.reconcile import check_available_counters, reconciliation_run
from metering.services import balance_topup
from tests.metering.conftest import make_event, tenant_stream

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.cluster]


def test_clean_books_have_no_findings_and_a_lost_request_is_reported(tenant, redis_client):
    TopUp.objects.create(tenant=tenant, amount_micros=5_000_000, payment_intent_id="r1", status="succeeded")
    balance_topup(tenant=tenant, amount_micros=5_000_000, idempotency_key="topup:r1", source="stripe")
    done = make_event(tenant.pk, request_id="req_done")
    usage_ingest(events=[done])
    redis_client.set(rk.generation("req_done"), done.to_json())
    assert [f for f in reconciliation_run() if f.severity == "error"] == []
    lost = make_event(tenant.pk, request_id="req_lost", finished_at=time.time() - 120)
    redis_client.set(rk.generation("req_lost"), lost.to_json())
    hold_place(redis_client, tenant_id=tenant.pk, hold_id="stuck", amount_micros=1, ttl_s=-120)
    checks = {f.check for f in reconciliation_run()}
    assert {"usage_missing", "expired_holds"} <= checks
    assert ReconciliationFinding.objects.filter(check_name="usage_missing", subject="req_lost").exists()


def test_available_drift_is_corrected_only_when_seen_twice_with_ingestion_idle(tenant, redis_client):
    from metering.consumer import UsageConsumer

    balance_topup(tenant=tenant, amount_micros=1_000_000, idempotency_key="topup:d1", source="stripe")
    redis_client.xadd(tenant_stream(tenant.pk), {"e": make_event(tenant.pk).to_json()})
    UsageConsumer(client=redis_client, name="d").run(until=time.monotonic() + 0.3, block_ms=50)
    redis_client.set(rk.tenant_available(tenant.pk), 123)  # e.g. a settle lost with a crashed gateway
    first = check_available_counters()
    assert first[0].detail == {"drift": 1_000_000 - 5_200 - 123, "corrected": False}
    second = check_available_counters()
    assert second[0].detail["corrected"] is True
    assert int(redis_client.get(rk.tenant_available(tenant.pk))) == 1_000_000 - 5_200
    assert check_available_counters() == []


def test_usage_is_ingested_by_a_real_celery_worker(tenant, redis_client, settings):
    from tokenway.celery import app

    redis_client.xadd(rk.USAGE_STREAM, {"e": make_event(tenant.pk, request_id="req_celery").to_json()})
    with start_worker(app, queues=["metering"], perform_ping_check=False, loglevel="WARNING"):
        from metering.tasks import usage_ingest_task

        usage_ingest_task.apply_async(queue="metering").get(timeout=30)
    assert UsageRecord.objects.filter(request_id="req_celery").exists()
