"""Traces of the usage consumer, when an operator turns them on (contracts.tracing): one CONSUMER span
per batch read from a usage stream ("usage batch"), and under it one "ingest usage" span per event of
the batch, linked to the gateway's server span of that call when the event carries its ``traceparent``
(contracts.usage), so a billed call leads back to the request that caused it and the other way round.

The events of a batch share one transaction, so their spans share its start and end. A span says
whether the event was booked now, was a duplicate (booked before: a redelivery) or was refused
(unknown tenant, error status). Attributes are ids, states and amounts only.

Off, the consumer holds no tracer and checks that once per batch; nothing here imports OpenTelemetry
until a provider is made.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from contracts.tracing import ProcessTracer, TraceSettings
from contracts.usage import UsageEvent
from metering.ingest import IngestResult

if TYPE_CHECKING:
    from opentelemetry.trace import Link, Tracer

Ingest = Callable[..., IngestResult]


TRACES = ProcessTracer("tokenway-metering", "tokenway.metering")


def consumer_tracer(settings: TraceSettings | None = None) -> Tracer | None:
    """The consumer's tracer, made once per process if an OTLP endpoint is configured; None while off.
    The settings are read on every call (once per consumer made, never per batch)."""
    return TRACES.tracer(settings)


def consumer_traces_shutdown() -> None:
    """Export what is batched and stop tracing (consumers made afterwards trace nothing unless configured)."""
    TRACES.shutdown()


def traced_batch(tracer: Tracer, stream: str, entries: int, run: Callable[[], IngestResult]) -> IngestResult:
    """``run`` (one batch of ``stream``) under its "usage batch" span; an exception marks it failed."""
    from opentelemetry.trace import SpanKind

    attributes: dict[str, str | int] = {
        "messaging.system": "redis",
        "messaging.destination.name": stream,
        "messaging.batch.message_count": entries,
    }
    with tracer.start_as_current_span("usage batch", kind=SpanKind.CONSUMER, attributes=attributes) as span:
        result = run()
        span.set_attributes(
            {
                "tokenway.inserted": len(result.inserted),
                "tokenway.duplicates": result.duplicates,
                "tokenway.rejected": len(result.rejected),
            }
        )
        return result


def traced_ingest(tracer: Tracer, ingest: Ingest) -> Ingest:
    """``ingest`` followed by one "ingest usage" span per event, over the time the batch took."""

    def run(*, events: list[UsageEvent]) -> IngestResult:
        started = time.time_ns()
        result = ingest(events=events)
        event_spans(tracer, events, result, started, time.time_ns())
        return result

    return run


def event_spans(tracer: Tracer, events: list[UsageEvent], result: IngestResult, start: int, end: int) -> None:
    from opentelemetry.trace import StatusCode

    booked = {event.request_id for event in result.inserted}
    refused = dict(result.rejected)
    for event in {event.request_id: event for event in events}.values():  # a request id is ingested once
        outcome = (
            "rejected" if event.request_id in refused else "inserted" if event.request_id in booked else "duplicate"
        )
        span = tracer.start_span(
            "ingest usage", start_time=start, links=_links(event.traceparent),
            attributes={"tokenway.request_id": event.request_id, "tokenway.tenant_id": event.tenant_id,
                        "tokenway.end_state": event.end_state, "tokenway.charge_micros": event.charge_micros,
                        "tokenway.duplicate": outcome == "duplicate", "tokenway.ingest.outcome": outcome},
        )  # fmt: skip
        if outcome == "rejected":
            span.set_status(StatusCode.ERROR, refused[event.request_id])
        span.end(end_time=end)


def _links(traceparent: str) -> list[Link]:
    """A link to the gateway's server span, read from the event's W3C traceparent (none if absent or garbled)."""
    if not traceparent:
        return []
    from opentelemetry.trace import Link, get_current_span
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    context = get_current_span(TraceContextTextMapPropagator().extract({"traceparent": traceparent})).get_span_context()
    return [Link(context, {"tokenway.link": "gateway request"})] if context.is_valid else []
