"""A real OTLP/HTTP trace receiver on loopback: decodes each ``ExportTraceServiceRequest`` (protobuf)
the exporter posts to ``/v1/traces`` and keeps its spans as plain dicts for assertions."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from contracts.tracing import ProcessTracer
from tests.waiting import poll_until

KINDS = {0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}


@dataclass
class ReceivedSpan:
    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    kind: str
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    status_code: int  # 0 unset, 1 ok, 2 error
    status_message: str
    service: str
    start_ns: int
    end_ns: int


def _value(value: AnyValue) -> Any:
    which = value.WhichOneof("value")
    if which == "array_value":
        return [_value(v) for v in value.array_value.values]
    return getattr(value, which) if which else None


def _attributes(items: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in items}


def decode(body: bytes) -> list[ReceivedSpan]:
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    spans = []
    for resource_spans in request.resource_spans:
        service = str(_attributes(resource_spans.resource.attributes).get("service.name", ""))
        for scope_spans in resource_spans.scope_spans:
            for s in scope_spans.spans:
                spans.append(
                    ReceivedSpan(
                        name=s.name,
                        trace_id=s.trace_id.hex(),
                        span_id=s.span_id.hex(),
                        parent_span_id=s.parent_span_id.hex(),
                        kind=KINDS[s.kind],
                        attributes=_attributes(s.attributes),
                        events=[(e.name, _attributes(e.attributes)) for e in s.events],
                        status_code=s.status.code,
                        status_message=s.status.message,
                        service=service,
                        start_ns=s.start_time_unix_nano,
                        end_ns=s.end_time_unix_nano,
                    )
                )
    return spans


@dataclass
class Receiver:
    spans: list[ReceivedSpan] = field(default_factory=list)
    requests: int = 0
    raw: list[bytes] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, body: bytes) -> None:
        decoded = decode(body)
        with self.lock:
            self.requests += 1
            self.raw.append(body)
            self.spans.extend(decoded)

    def trace_of(self, request_id: str, *, count: int, timeout: float = 5.0) -> list[ReceivedSpan]:
        """The spans of the trace whose server span carries ``request_id``, once ``count`` have arrived."""

        def found() -> tuple[list[ReceivedSpan], ...]:
            with self.lock:
                servers = [s for s in self.spans if s.attributes.get("tokenway.request_id") == request_id]
                if not servers:
                    return ()
                spans = [s for s in self.spans if s.trace_id == servers[0].trace_id]
            return (spans,) if len(spans) >= count else ()

        result = poll_until(found, timeout=timeout, interval=0.02)
        if not result:
            with self.lock:
                names = [(s.name, s.attributes.get("tokenway.request_id")) for s in self.spans[-20:]]
            raise AssertionError(f"no trace of {count} spans for {request_id}; last spans: {names}")
        return result[0]


class OtlpReceiver:
    """``ThreadingHTTPServer`` in a daemon thread; ``endpoint`` is what OTEL_EXPORTER_OTLP_TRACES_ENDPOINT takes."""

    def __init__(self) -> None:
        received = self.received = Receiver()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                if self.headers.get("content-encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path != "/v1/traces" or self.headers.get("content-type") != "application/x-protobuf":
                    self.send_response(404)
                    self.end_headers()
                    return
                received.add(body)
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_port}/v1/traces"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


@contextmanager
def exporting_to_receiver(monkeypatch: Any, holder: ProcessTracer, service: str | None) -> Iterator[OtlpReceiver]:
    """A receiver the process's traces for ``holder`` go to while the block runs (a provider another
    test left, exporting elsewhere, is shut down before and after); ``service`` None: the part's own
    default service name."""
    holder.shutdown()
    server = OtlpReceiver()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", server.endpoint)
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
    if service is None:
        monkeypatch.delenv("OTEL_SERVICE_NAME", raising=False)
    else:
        monkeypatch.setenv("OTEL_SERVICE_NAME", service)
    monkeypatch.delenv("OTEL_SDK_DISABLED", raising=False)
    try:
        yield server
    finally:
        holder.shutdown()
        server.stop()
