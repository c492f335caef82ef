"""Worker traces: a real in-process Celery worker on the Redis broker runs the metering ingest task,
and a real OTLP/HTTP receiver on loopback gets one consumer span for that run; without an endpoint
the worker traces nothing."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from celery.contrib.testing.worker import start_worker

from foundation import task_traces
from metering.tasks import usage_ingest_task
from tests.routing.otlp_receiver import OtlpReceiver, ReceivedSpan, exporting_to_receiver
from tests.waiting import poll_until
from tokenway.celery import app

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[OtlpReceiver]:
    with exporting_to_receiver(monkeypatch, task_traces.TRACES, None) as server:
        yield server


def test_each_task_run_is_one_span_named_after_the_task(receiver, redis_client):
    assert task_traces.traces_install() is True
    with start_worker(
        app, pool="threads", concurrency=1, queues=["metering"], perform_ping_check=False, shutdown_timeout=30
    ):
        sent = usage_ingest_task.apply_async(queue="metering")

        def span_of_run() -> list[ReceivedSpan]:
            return [s for s in receiver.received.spans if s.attributes.get("celery.task_id") == sent.id]

        found = poll_until(span_of_run, timeout=20, interval=0.05)
    assert found, [s.name for s in receiver.received.spans]
    [span] = found
    assert span.name == "metering.tasks.usage_ingest" and span.kind == "consumer"
    assert span.service == "tokenway-worker" and span.parent_span_id == ""
    assert span.attributes["celery.state"] == "SUCCESS"
    assert span.attributes["celery.queue"] == "metering"
    assert not task_traces.RUNNING


def test_a_worker_with_traces_disabled_sends_nothing(receiver, monkeypatch, redis_client):
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    assert task_traces.traces_install() is False
    assert task_traces.TRACES.provider is None
    with start_worker(
        app, pool="threads", concurrency=1, queues=["metering"], perform_ping_check=False, shutdown_timeout=30
    ):
        usage_ingest_task.apply_async(queue="metering")
        assert poll_until(lambda: redis_client.llen("metering") == 0, timeout=20, interval=0.05)
    time.sleep(0.3)  # six export periods of a traced worker
    assert receiver.received.requests == 0
