"""PostgreSQL away: the consumer keeps its batch pending, backs off, reconnects and catches up; it
never exits (the chaos suite stops the real server: tests/reliability/test_dependencies.py)."""

from __future__ import annotations

import time

import pytest
from django.db import InterfaceError, OperationalError

from contracts.redis_keys import USAGE_GROUP, USAGE_STREAM
from metering import consumer as consumer_module
from metering.consumer import UsageConsumer
from metering.ingest import usage_ingest
from metering.models import UsageRecord
from tests.metering.conftest import make_event

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.cluster, pytest.mark.local_servers]


def test_the_batch_is_applied_once_after_the_database_returns(tenant, redis_client, monkeypatch):
    monkeypatch.setattr(consumer_module, "DB_RETRY_FIRST_S", 0.05)
    events = [make_event(tenant.pk) for _ in range(5)]
    for event in events:
        redis_client.xadd(USAGE_STREAM, {"e": event.to_json()})
    outages = [OperationalError("server closed the connection"), InterfaceError("connection already closed")]

    def ingest_while_down(**kwargs):
        if outages:
            raise outages.pop(0)
        return usage_ingest(**kwargs)

    consumer = UsageConsumer(
        client=redis_client, name="db-outage", after_batch=lambda _: None, ingest=ingest_while_down
    )
    handled = consumer.run(until=time.monotonic() + 1.5, block_ms=50)
    assert outages == []  # both failures were met and survived
    assert handled == 5
    assert sorted(UsageRecord.objects.values_list("request_id", flat=True)) == sorted(e.request_id for e in events)
    assert redis_client.xpending(USAGE_STREAM, USAGE_GROUP)["pending"] == 0


def test_backoff_doubles_up_to_its_cap(monkeypatch):
    monkeypatch.setattr(consumer_module, "DB_RETRY_MAX_S", 0.04)
    assert consumer_module.database_backoff(OperationalError("gone"), 0.01) == 0.02
    assert consumer_module.database_backoff(OperationalError("gone"), 0.03) == 0.04  # capped
