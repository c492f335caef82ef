"""Thin, idempotent Celery tasks of the metering domain (routes: stripe_* -> stripe, others -> metering).

Functions end in ``_task`` (the service they call keeps the plain name); the registered names
(``metering.tasks.<service>``) stay as they were, so beat entries and queue routes are unchanged.
"""

from __future__ import annotations

import time

from celery import Task, shared_task
from django.utils import timezone

from foundation.redis_client import get_redis
from metering import billing, consumer, holds, reconcile, retention
from metering.stripe import meter_push
from metering.stripe.client import StripeError
from tenants.models import Tenant

# A beat-driven ingestion run drains the stream for at most this long, so runs (every second) do not pile up.
INGEST_RUN_BUDGET_S = 0.9


@shared_task(name="metering.tasks.usage_ingest", ignore_result=True, expires=5)
def usage_ingest_task() -> int:
    """Drain the usage stream for up to a second (beat runs it every second; ``consume_usage`` is the daemon)."""
    worker = consumer.UsageConsumer(client=get_redis(), name=f"celery-{consumer.consumer_name()}")
    return worker.run(until=time.monotonic() + INGEST_RUN_BUDGET_S, block_ms=100)


@shared_task(name="metering.tasks.holds_reap", ignore_result=True, expires=10)
def holds_reap_task() -> int:
    return holds.holds_reap(get_redis(), tenant_ids=Tenant.objects.values_list("pk", flat=True).iterator())


@shared_task(name="metering.tasks.reconciliation_run", ignore_result=True, expires=60)
def reconciliation_run_task() -> int:
    return len(reconcile.reconciliation_run())


@shared_task(name="metering.tasks.partitions_maintain", ignore_result=True, expires=3600)
def partitions_maintain_task() -> int:
    """Month partitions ahead and for stray rows; months past retention detached. Idempotent."""
    result = retention.partitions_maintain(now=timezone.now())
    return sum(len(months) for months in [*result.created.values(), *result.detached.values()])


@shared_task(name="metering.tasks.stripe_meter_push", ignore_result=True, expires=10)
def stripe_meter_push_task() -> int:
    return meter_push.meter_events_push().sent


@shared_task(
    name="metering.tasks.stripe_customer_ensure", bind=True, ignore_result=True, max_retries=5, default_retry_delay=30
)
def stripe_customer_ensure_task(self: Task[[int], None], tenant_id: int) -> None:
    tenant = Tenant.objects.get(pk=tenant_id)
    try:
        billing.customer_ensure(tenant=tenant)
    except StripeError as exc:
        raise self.retry(exc=exc) from exc
