"""Traces of the Django side (console, management API, admin, webhooks), when an operator turns them on
(contracts.tracing): one SERVER span per request, named ``"<METHOD> <route>"`` after the URL pattern that
resolved (``GET /api/v1/tenants/<slug:tenant_slug>/``, never the path with its ids), continuing the
caller's W3C ``traceparent``.

Always listed in MIDDLEWARE, and off it costs nothing per request: the middleware is built once per
handler, and when no OTLP endpoint is configured its constructor raises ``MiddlewareNotUsed``, so
Django leaves it out of the chain. That keeps one settings list for every deployment (no import-time
branch in settings, which tests could not flip) and imports no OpenTelemetry SDK module while off.

It is sync- and async-capable: under ASGI (Channels, uvicorn) it runs as a coroutine on the event loop
and Django's sync views inherit its span through the copied context; under WSGI or the test client
it is a plain call. The span ends when the view returns its response (a streamed body is not timed).

Attributes are the method, the route, the status and the tenant when the request names one (an API
key's tenant id, the tenant slug of the URL); never the path, a query string, a header, a cookie or
a body.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.core.exceptions import MiddlewareNotUsed
from django.http import HttpRequest, HttpResponseBase

from contracts.tracing import ProcessTracer, TraceSettings

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.trace import Span, Tracer

GetResponse = Callable[[HttpRequest], HttpResponseBase | Awaitable[HttpResponseBase]]
TENANT_SLUG_KWARGS = ("tenant_slug",)  # the management API's tenant routes
CONSOLE_PREFIX = "/console/"  # console pages: ``console/<slug:slug>/...``, the slug is the tenant's


TRACES = ProcessTracer("tokenway-web", "tokenway.web")  # made by the first handler that loads the middleware


def web_tracer(settings: TraceSettings | None = None) -> Tracer | None:
    """The web tracer, made on first use if an OTLP endpoint is configured; None while traces are off.
    The settings are read on every call (once per handler built, never per request)."""
    return TRACES.tracer(settings)


def web_traces_shutdown() -> None:
    """Export what is batched and drop the provider (a handler built afterwards makes a new one, or leaves
    the middleware out once traces are off)."""
    TRACES.shutdown()


class WebTraceMiddleware:
    sync_capable = True
    async_capable = True

    def __init__(self, get_response: GetResponse) -> None:
        tracer = web_tracer()
        if tracer is None:
            raise MiddlewareNotUsed("traces are off")
        self.tracer = tracer
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self._serve_async(request)
        with self._span(request) as span:
            response: Any = self.get_response(request)
            _describe(span, request, response)
            return response

    async def _serve_async(self, request: HttpRequest) -> HttpResponseBase:
        with self._span(request) as span:
            response: HttpResponseBase = await self.get_response(request)  # type: ignore[misc]
            _describe(span, request, response)
            return response

    def _span(self, request: HttpRequest) -> AbstractContextManager[Span]:
        from opentelemetry.trace import SpanKind

        method = request.method or "GET"
        return self.tracer.start_as_current_span(
            method, context=_incoming(request), kind=SpanKind.SERVER,
            attributes={"http.request.method": method},
        )  # fmt: skip


def _incoming(request: HttpRequest) -> Context | None:
    carrier = {name: request.META[key] for name, key in (("traceparent", "HTTP_TRACEPARENT"),
               ("tracestate", "HTTP_TRACESTATE")) if key in request.META}  # fmt: skip
    if not carrier:
        return None
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    return TraceContextTextMapPropagator().extract(carrier)


def _describe(span: Span, request: HttpRequest, response: HttpResponseBase) -> None:
    """Name the span after its route (known once the URL resolved) and record the outcome."""
    from opentelemetry.trace import StatusCode

    match = request.resolver_match  # None when no URL matched (a 404): the span keeps the bare method
    route = f"/{match.route}" if match is not None else ""
    if route:
        span.update_name(f"{request.method} {route}")
        span.set_attribute("http.route", route)
    span.set_attribute("http.response.status_code", response.status_code)
    if response.status_code >= 500:
        span.set_status(StatusCode.ERROR)
    tenant_id = getattr(getattr(request, "auth", None), "tenant_id", None)
    if isinstance(tenant_id, int):
        span.set_attribute("tokenway.tenant_id", tenant_id)
    slug = _tenant_slug(route, match.kwargs if match is not None else {})
    if slug:
        span.set_attribute("tokenway.tenant_slug", slug)


def _tenant_slug(route: str, kwargs: dict[str, Any]) -> str:
    for name in TENANT_SLUG_KWARGS:
        if isinstance(kwargs.get(name), str):
            return str(kwargs[name])
    slug = kwargs.get("slug")
    return slug if route.startswith(CONSOLE_PREFIX) and isinstance(slug, str) else ""
