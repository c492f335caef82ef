"""Usage consumer traces, as an operator's collector sees them: the real consumer reads real Redis streams
and books into PostgreSQL, exporting over OTLP/HTTP to a real receiver on loopback. One span per batch,
under it one span per event that links to the gateway call's span (by the event's traceparent) and says
whether the event was booked or a redelivery; the real gateway puts its call's trace into the event;
with traces off the consumer holds no tracer and nothing is exported."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import replace

import orjson
import pytest
import requests
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from contracts.usage import UsageEvent
from metering import ingest_traces
from metering.consumer import UsageConsumer
from metering.models import UsageRecord
from metering.services import balance_topup, tenant_available_ensure
from tests.factories import issue_key
from tests.metering.conftest import make_event, tenant_stream
from tests.routing.conftest import sim  # noqa: F401 - fixture
from tests.routing.otlp_receiver import OtlpReceiver, ReceivedSpan, exporting_to_receiver
from tests.routing.test_tracing import _serve, _traced_app
from tests.waiting import poll_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.cluster]


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[OtlpReceiver]:
    with exporting_to_receiver(monkeypatch, ingest_traces.TRACES, "tokenway-metering-test") as server:
        yield server


def _consume(redis_client, expected_records: int) -> UsageConsumer:
    consumer = UsageConsumer(client=redis_client, name="traces-test", after_batch=lambda _: None)
    deadline = time.monotonic() + 10
    while UsageRecord.objects.count() < expected_records and time.monotonic() < deadline:
        consumer.run(until=time.monotonic() + 0.3, block_ms=50)
    assert UsageRecord.objects.count() == expected_records
    return consumer


def _links(receiver: OtlpReceiver) -> dict[str, list[tuple[str, str]]]:
    """Span id -> (trace id, span id) of each link, decoded from the raw OTLP requests."""
    links: dict[str, list[tuple[str, str]]] = {}
    with receiver.received.lock:
        bodies = list(receiver.received.raw)
    for body in bodies:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        for resource in request.resource_spans:
            for scope in resource.scope_spans:
                for span in scope.spans:
                    links[span.span_id.hex()] = [(link.trace_id.hex(), link.span_id.hex()) for link in span.links]
    return links


def _named(receiver: OtlpReceiver, name: str, count: int) -> list[ReceivedSpan]:
    def found() -> list[ReceivedSpan]:
        with receiver.received.lock:
            spans = [s for s in receiver.received.spans if s.name == name]
        return spans if len(spans) >= count else []

    spans = poll_until(found, timeout=10)
    assert len(spans) == count, [s.name for s in receiver.received.spans]
    return spans


def test_each_event_is_a_span_under_its_batch_linked_to_the_gateway_call(receiver, tenant, redis_client):
    call_trace, call_span = os.urandom(16).hex(), os.urandom(8).hex()
    event = make_event(tenant.pk, traceparent=f"00-{call_trace}-{call_span}-01", end_state="completed")
    stream = tenant_stream(tenant.pk)
    redis_client.xadd(stream, {"e": event.to_json()})
    consumer = _consume(redis_client, 1)
    assert consumer.tracer is not None
    redis_client.xadd(stream, {"e": event.to_json()})  # redelivered: booked once, its span says so
    consumer.run(until=time.monotonic() + 0.5, block_ms=50)
    assert UsageRecord.objects.count() == 1

    batches = sorted(_named(receiver, "usage batch", 2), key=lambda s: s.start_ns)
    ingested = sorted(_named(receiver, "ingest usage", 2), key=lambda s: s.start_ns)
    for batch, one in zip(batches, ingested, strict=True):
        assert batch.kind == "consumer" and batch.service == "tokenway-metering-test"
        assert batch.attributes["messaging.destination.name"] == stream
        assert batch.attributes["messaging.batch.message_count"] == 1
        assert one.parent_span_id == batch.span_id and one.trace_id == batch.trace_id
        assert batch.start_ns <= one.start_ns <= one.end_ns <= batch.end_ns
        assert one.attributes["tokenway.request_id"] == event.request_id
        assert one.attributes["tokenway.tenant_id"] == tenant.pk
        assert one.attributes["tokenway.end_state"] == "completed"
        assert one.attributes["tokenway.charge_micros"] == event.charge_micros > 0
        assert _links(receiver)[one.span_id] == [(call_trace, call_span)]
    assert [one.attributes["tokenway.duplicate"] for one in ingested] == [False, True]
    assert [one.attributes["tokenway.ingest.outcome"] for one in ingested] == ["inserted", "duplicate"]
    assert (batches[0].attributes["tokenway.inserted"], batches[1].attributes["tokenway.duplicates"]) == (1, 1)


def test_an_event_without_trace_context_still_books_and_its_span_has_no_link(receiver, tenant, redis_client):
    old = orjson.loads(make_event(tenant.pk).to_json())
    del old["traceparent"]  # written by a gateway from before the field
    assert UsageEvent.from_json(orjson.dumps(old)).traceparent == ""
    redis_client.xadd(tenant_stream(tenant.pk), {"e": orjson.dumps(old)})
    unknown = make_event(tenant.pk + 1000, traceparent="00-garbled")  # no such tenant: refused, marked as an error
    redis_client.xadd(tenant_stream(tenant.pk + 1000), {"e": unknown.to_json()})
    _consume(redis_client, 1)
    spans = {s.attributes["tokenway.request_id"]: s for s in _named(receiver, "ingest usage", 2)}
    booked, refused = spans[old["request_id"]], spans[unknown.request_id]
    assert booked.attributes["tokenway.ingest.outcome"] == "inserted" and booked.status_code == 0
    assert refused.attributes["tokenway.ingest.outcome"] == "rejected"
    assert (refused.status_code, refused.status_message) == (2, "unknown_tenant")
    links = _links(receiver)
    assert links[booked.span_id] == [] and links[refused.span_id] == []


def test_a_traced_gateway_call_is_billed_in_a_span_linked_to_its_trace(receiver, sim, tenant, redis_client):  # noqa: F811
    balance_topup(tenant=tenant, amount_micros=5_000_000, idempotency_key="topup:traces", source="stripe")
    tenant_available_ensure(tenant=tenant)
    _, plaintext = issue_key(tenant, name="app")
    server = _serve(_traced_app(receiver), sim, redis_client)
    try:
        answer = requests.post(
            f"{server.base_url}/v1/chat/completions",
            timeout=30,
            headers={"authorization": f"Bearer {plaintext}"},
            json={"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 20},
        )
    finally:
        server.stop()
    assert answer.status_code == 200, answer.text
    request_id = answer.headers["x-request-id"]
    [call] = _named(receiver, "POST /v1/chat/completions", 1)
    assert call.attributes["tokenway.request_id"] == request_id
    [(_, fields)] = redis_client.xrange(tenant_stream(tenant.pk))
    carried = UsageEvent.from_json(fields[b"e"])
    version, trace_id, span_id, flags = carried.traceparent.split("-")
    assert (version, trace_id, span_id) == ("00", call.trace_id, call.span_id) and int(flags, 16) & 1  # sampled
    _consume(redis_client, 1)
    [billed] = _named(receiver, "ingest usage", 1)
    assert billed.attributes["tokenway.request_id"] == request_id
    assert billed.attributes["tokenway.charge_micros"] == UsageRecord.objects.get().charge_micros
    assert _links(receiver)[billed.span_id] == [(call.trace_id, call.span_id)]


def test_traces_off_the_consumer_holds_no_tracer_and_exports_nothing(receiver, monkeypatch, tenant, redis_client):
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    event = replace(make_event(tenant.pk), traceparent=f"00-{'ab' * 16}-{'cd' * 8}-01")
    redis_client.xadd(tenant_stream(tenant.pk), {"e": event.to_json()})
    consumer = _consume(redis_client, 1)
    assert consumer.tracer is None and ingest_traces.TRACES.provider is None
    time.sleep(0.3)  # six export periods of a traced consumer: nothing comes
    assert receiver.received.requests == 0
