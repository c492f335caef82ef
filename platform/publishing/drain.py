"""Publish pending outbox rows to Redis, each once, in the order they were written.

Run on commit of every change that wrote a row (outbox.services) and every few seconds by beat
(publishing.tasks), which retries what a Redis outage left pending. Rows are claimed with
``FOR UPDATE SKIP LOCKED``: two drains never publish the same row. What is published is the current state
read from the database, so publishing a row again (a crash between Redis and the commit) is harmless; the
one additive change, a balance adjustment, is applied once by its row id (metering.gateway_counters,
through publishing.money_counters).
"""

from __future__ import annotations

import logging
from datetime import timedelta

import redis
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from apikeys.models import ApiKey
from outbox.models import OutboxRow, Topic
from publishing.catalog_snapshot import publish_catalog
from publishing.keys import publish_all_keys, publish_key, publish_tenant_keys
from publishing.money_counters import money_counters
from tenants.models import Tenant

logger = logging.getLogger(__name__)
DRAIN_BATCH = 200  # rows per transaction: a burst of changes goes out in a few round trips
KEEP_PUBLISHED = timedelta(days=7)  # published rows kept this long for inspection, then pruned
PRUNE_BATCH = 1000  # rows deleted per periodic run: a backlog is cleared over a few runs, never in one long delete
ERROR_CHARS = 500  # the kept part of the last error


def _publish(row: OutboxRow) -> None:
    if row.topic == Topic.CATALOG:
        publish_catalog()
    elif row.topic == Topic.ALL_KEYS:
        publish_all_keys()
    elif row.topic == Topic.KEY and row.key_id is not None:
        if api_key := ApiKey.objects.select_related("tenant").filter(pk=row.key_id).first():
            publish_key(api_key)
    elif row.tenant_id is not None and (tenant := Tenant.objects.filter(pk=row.tenant_id).first()):
        if row.topic == Topic.TENANT_KEYS:
            money_counters().spend_counters_ensure(tenant=tenant)  # a new spend limit counts what was spent before it
            publish_tenant_keys(tenant)
        elif row.topic == Topic.BALANCE_ENSURE:
            money_counters().balance_ensure(tenant=tenant)
        elif row.topic == Topic.BALANCE_ADJUST:
            money_counters().balance_adjust_once(tenant=tenant, delta_micros=row.delta_micros, change_id=row.pk)


def _same(row: OutboxRow) -> tuple[str, int | None, int | None] | None:
    """Rows that publish the same thing: one publish serves them all (None: additive, never merged)."""
    return None if row.topic == Topic.BALANCE_ADJUST else (row.topic, row.tenant_id, row.key_id)


def _drain_batch(batch: int) -> tuple[int, bool]:
    """(rows published, more may be pending). Stops at the first Redis error: the rest would fail too."""
    with transaction.atomic():
        pending = OutboxRow.objects.select_for_update(skip_locked=True).filter(published_at__isnull=True)
        rows = list(pending.order_by("id")[:batch])
        done: list[int] = []
        seen: set[tuple[str, int | None, int | None]] = set()
        for row in rows:
            key = _same(row)
            if key is None or key not in seen:
                try:
                    _publish(row)
                except redis.RedisError as exc:
                    logger.warning("outbox row %s not published (will retry): %s", row, exc)
                    OutboxRow.objects.filter(pk=row.pk).update(
                        attempts=F("attempts") + 1, last_error=str(exc)[:ERROR_CHARS]
                    )
                    OutboxRow.objects.filter(pk__in=done).update(published_at=timezone.now())
                    return len(done), False
                if key is not None:
                    seen.add(key)
            done.append(row.pk)
        OutboxRow.objects.filter(pk__in=done).update(published_at=timezone.now())
        return len(done), len(rows) == batch


def outbox_drain(*, batch: int = DRAIN_BATCH) -> int:
    """Publish every pending row; returns how many rows were marked published."""
    total, more = 0, True
    while more:
        published, more = _drain_batch(batch)
        total += published
    return total


def outbox_prune(*, keep: timedelta = KEEP_PUBLISHED, batch: int = PRUNE_BATCH) -> int:
    """Delete up to ``batch`` rows published more than ``keep`` ago; pending rows are never deleted."""
    cutoff = timezone.now() - keep
    old = OutboxRow.objects.filter(published_at__lt=cutoff).order_by("id").values_list("id", flat=True)[:batch]
    deleted, _ = OutboxRow.objects.filter(pk__in=list(old)).delete()
    return deleted
