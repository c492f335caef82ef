"""Optional OpenTelemetry traces, for the gateway and the workers alike.

On only when an OTLP endpoint is configured, by the standard variables
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_ENDPOINT`` (``OTEL_SDK_DISABLED=true``
or ``OTEL_TRACES_EXPORTER=none`` turn them off again). The SDK reads the other standard variables
itself (``OTEL_TRACES_SAMPLER`` and ``_ARG``, ``OTEL_BSP_*``, ``OTEL_RESOURCE_ATTRIBUTES``, the
exporter's headers and timeout): they are not read a second time here. While traces are off, no
tracing SDK or exporter module is even imported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from contracts import jsonlog
from contracts.env import env_bool, env_str

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider


@dataclass(frozen=True, slots=True)
class TraceSettings:
    enabled: bool = False
    service_name: str = "tokenway"

    @classmethod
    def from_env(cls, default_service: str) -> TraceSettings:
        endpoint = env_str("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env_str("OTEL_EXPORTER_OTLP_ENDPOINT")
        exporter = env_str("OTEL_TRACES_EXPORTER", "otlp").strip().lower()
        enabled = bool(endpoint.strip()) and exporter != "none" and not env_bool("OTEL_SDK_DISABLED")
        return cls(enabled=enabled, service_name=env_str("OTEL_SERVICE_NAME").strip() or default_service)


def make_provider(settings: TraceSettings) -> TracerProvider:
    """A provider exporting over OTLP/HTTP (protobuf) from a background thread, so a request never
    waits for the collector. Its log lines carry the trace id from now on (contracts.jsonlog)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: settings.service_name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    if current_trace_ids not in jsonlog.TRACE_SOURCES:
        jsonlog.TRACE_SOURCES.append(current_trace_ids)
    return provider


def current_trace_ids() -> tuple[str, str] | None:
    """(trace id, span id) of the span current in this context, as hex; None outside any span."""
    from opentelemetry import trace

    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return trace.format_trace_id(context.trace_id), trace.format_span_id(context.span_id)
