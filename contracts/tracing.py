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
    from opentelemetry.trace import Tracer


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


@dataclass
class ProcessTracer:
    """One process's tracer for one part of the platform, made on first use while traces are on.
    ``tracer()`` reads the settings on every call, so call it when a handler or consumer is built, never
    per request; ``shutdown()`` exports what is batched and forgets the provider (the next ``tracer()``
    makes a new one, or returns None once traces are off)."""

    default_service: str  # OTEL_SERVICE_NAME, when the environment does not name one
    instrumentation: str  # the tracer's name in every span it makes
    provider: TracerProvider | None = None

    _tracer: Tracer | None = None

    def tracer(self, settings: TraceSettings | None = None) -> Tracer | None:
        settings = settings or TraceSettings.from_env(self.default_service)
        if not settings.enabled:
            return None
        if self._tracer is None:
            self.provider = make_provider(settings)
            self._tracer = self.provider.get_tracer(self.instrumentation)
        return self._tracer

    @property
    def current(self) -> Tracer | None:
        """The tracer if one is made, without reading the settings (per task or per message)."""
        return self._tracer

    def shutdown(self) -> None:
        provider, self.provider, self._tracer = self.provider, None, None
        if provider is not None:
            provider.shutdown()


def current_trace_ids() -> tuple[str, str] | None:
    """(trace id, span id) of the span current in this context, as hex; None outside any span."""
    from opentelemetry import trace

    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return trace.format_trace_id(context.trace_id), trace.format_span_id(context.span_id)
