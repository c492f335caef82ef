"""The gateway's Prometheus metrics: what operators alert on (docs/operations.md).

Counters and histograms are updated on the request path (a lock and an add each); per-offering
breaker state, live error rate and TTFT are read from the health board only when scraped.
Served at ``GET /metrics`` by the gateway app (``python -m routing``) or, in the all-in-one web
process, by the platform's view, which renders the same process-wide registry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from contracts.metrics_access import CONTENT_TYPE, METRICS_PATH, metrics_allowed
from routing.http.asgi_io import Scope, Send, header_map, respond

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)
TTFT_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 20, 60)

# The gateway's own registry: its /metrics never runs another part's collectors (the platform's read
# the database, which cannot run on the gateway's event loop); the web process renders both.
GATEWAY_REGISTRY = CollectorRegistry()

REQUESTS = Counter(
    "tokenway_gateway_requests", "Gateway calls by endpoint and HTTP status.", ["endpoint", "status"],
    registry=GATEWAY_REGISTRY,
)  # fmt: skip
DURATION = Histogram(
    "tokenway_gateway_request_duration_seconds", "Whole call, first byte in to last byte out.", ["endpoint"],
    buckets=LATENCY_BUCKETS, registry=GATEWAY_REGISTRY,
)  # fmt: skip
TTFT = Histogram(
    "tokenway_gateway_ttft_seconds", "Arrival to the upstream's first byte, per provider.", ["provider"],
    buckets=TTFT_BUCKETS, registry=GATEWAY_REGISTRY,
)  # fmt: skip
UPSTREAM_FAILURES = Counter(
    "tokenway_gateway_upstream_failures", "Failed attempts before the first byte, by provider and kind.",
    ["provider", "kind"], registry=GATEWAY_REGISTRY,
)  # fmt: skip
EDGE_REFUSALS = Counter(
    "tokenway_edge_refusals", "Connections the HTTP server refused or closed itself (routing/edge), by status and code.",
    ["status", "code"], registry=GATEWAY_REGISTRY,
)  # fmt: skip
UNEXPECTED = Counter(
    "tokenway_gateway_unexpected_errors", "Calls that met an unexpected exception (a bug), by endpoint.", ["endpoint"],
    registry=GATEWAY_REGISTRY,
)  # fmt: skip

__all__ = ["GATEWAYS", "METRICS_PATH", "observe_request", "observe_ttft", "observe_unexpected", "serve_metrics"]

MAX_BOUND_CHILDREN = 256
ENDPOINTS = frozenset({"/v1/chat/completions", "/v1/messages", "/v1/messages/count_tokens", "/v1/responses"})


Figures = Callable[[], dict[str, Any]]  # one gateway's capacity snapshot (see CAPACITY)


# Label children bound once per (endpoint, status) and per provider: ``labels()`` takes a lock and
# builds its key on every call; the label sets are bounded (endpoint_label; catalog providers).
_REQUEST_CHILDREN: dict[tuple[str, int], tuple[Any, Any]] = {}
_TTFT_CHILDREN: dict[str, Any] = {}


def observe_request(path: str, status: int, seconds: float) -> None:
    key = (path, status)
    children = _REQUEST_CHILDREN.get(key)
    if children is None:
        endpoint = endpoint_label(path)
        children = (REQUESTS.labels(endpoint, str(status)), DURATION.labels(endpoint))
        if len(_REQUEST_CHILDREN) < MAX_BOUND_CHILDREN:  # a caller's made-up paths do not grow this map
            _REQUEST_CHILDREN[key] = children
    children[0].inc()
    children[1].observe(seconds)


def observe_ttft(provider: str, seconds: float) -> None:
    child = _TTFT_CHILDREN.get(provider)
    if child is None:
        child = _TTFT_CHILDREN[provider] = TTFT.labels(provider)
    child.observe(seconds)


def observe_unexpected(path: str) -> None:
    """Rare by nature (each one is a bug): no bound child kept."""
    UNEXPECTED.labels(endpoint_label(path)).inc()


def endpoint_label(path: str) -> str:
    """Bounded label values: a caller's made-up path never creates a new series."""
    if path in ENDPOINTS:
        return path
    return "/v1/models" if path.startswith("/v1/models") else "other"


class GatewayCollector(Collector):
    """Per-offering breaker state, live error and 429 rates and TTFT EWMA, and the process's capacity
    (routing.handlers.health), of every running gateway in this process (one in production; tests
    start several)."""

    def __init__(self) -> None:
        self._gateways: dict[int, tuple[Any, Figures]] = {}

    def add(self, gateway: Any, figures: Figures) -> None:
        """``figures`` reads the gateway's capacity (routing.handlers.health.snapshot, given by the app: this
        module is a leaf and imports nothing of the request path)."""
        self._gateways[id(gateway)] = (gateway, figures)

    def remove(self, gateway: Any) -> None:
        self._gateways.pop(id(gateway), None)

    def running(self) -> list[Any]:
        """The gateways running in this process (the platform's /healthz reads their usage spools)."""
        return [gateway for gateway, _figures in self._gateways.values()]

    def collect(self) -> Iterator[GaugeMetricFamily]:
        families = {
            "breaker": GaugeMetricFamily(
                "tokenway_gateway_breaker_open", "1 while an offering's breaker is open.", labels=["offering"]
            ),
            "errors": GaugeMetricFamily(
                "tokenway_gateway_live_error_rate", "Faded EWMA of failed attempts (0..1).", labels=["offering"]
            ),
            "throttled": GaugeMetricFamily(
                "tokenway_gateway_live_throttle_rate", "Faded EWMA of upstream 429s (0..1).", labels=["offering"]
            ),
            "ttft": GaugeMetricFamily(
                "tokenway_gateway_live_ttft_seconds", "EWMA of time to first byte.", labels=["offering"]
            ),
        }
        capacity: dict[str, float] = dict.fromkeys(CAPACITY, 0.0)
        for gateway, figures in list(self._gateways.values()):
            self._offerings(gateway, families)
            for name, value in _capacity(figures()).items():
                capacity[name] += value
        yield from families.values()
        for name, (doc, _read) in CAPACITY.items():
            family = GaugeMetricFamily(name, doc)
            family.add_metric([], capacity[name])
            yield family

    @staticmethod
    def _offerings(gateway: Any, families: dict[str, GaugeMetricFamily]) -> None:
        board = gateway.health
        now = board.now()
        for offering_id, health in board.items():
            offering = gateway.catalog.by_id.get(offering_id)
            if offering is None:
                continue
            name = f"{offering.provider}/{offering.model}"
            live = board.live(offering_id)
            families["breaker"].add_metric([name], 1.0 if health.open_until and now < health.open_until else 0.0)
            families["errors"].add_metric([name], live.error_rate)
            families["throttled"].add_metric([name], live.throttle_rate)
            if live.latency_ms is not None:
                families["ttft"].add_metric([name], live.latency_ms / 1000)


# name -> (help, reader of routing.handlers.health.snapshot): what operators size a gateway by.
CAPACITY: dict[str, tuple[str, Callable[[dict[str, Any]], float]]] = {
    "tokenway_gateway_open_streams": ("Streams being relayed now.", lambda s: s["open_streams"]),
    "tokenway_gateway_stream_ceiling": ("Open streams the fd limit allows.", lambda s: s["stream_ceiling"]),
    "tokenway_gateway_fd_limit": ("Soft RLIMIT_NOFILE in force.", lambda s: s["fd_limit"]),
    "tokenway_gateway_open_fds": ("File descriptors open now.", lambda s: s["open_fds"]),
    "tokenway_gateway_upstream_in_flight": (
        "Upstream requests holding a connection.", lambda s: s["upstream"]["in_flight"],
    ),
    "tokenway_gateway_pool_waiting": ("Requests waiting for a per-host slot.", lambda s: s["upstream"]["waiting"]),
    "tokenway_gateway_pool_waits": ("Requests that waited for a slot (since start).", lambda s: s["upstream"]["waited_total"]),
    "tokenway_gateway_pool_wait_timeouts": (
        "Requests refused (503 gateway_busy) after the pool wait (since start).",
        lambda s: s["upstream"]["wait_timeouts_total"],
    ),
    "tokenway_gateway_usage_spool_unwritable": (
        "1 while the usage spool cannot be written (routing.handoff.spool).", lambda s: not s["usage_spool"]["writable"],
    ),
    "tokenway_gateway_usage_held": (
        "Usage events neither Redis nor the spool took yet, kept in memory.", lambda s: s["usage_spool"]["held"],
    ),
    "tokenway_gateway_refusing_paid_work": (
        "1 while paid calls are refused (503): neither Redis nor the spool takes usage.",
        lambda s: s["usage_spool"]["refusing"],
    ),
    "tokenway_gateway_usage_spool_write_failures": (
        "Usage spool writes that failed (since start).", lambda s: s["usage_spool"]["write_failures"],
    ),
    "tokenway_gateway_usage_lost": (
        "Usage events dropped beyond what memory holds (since start); must stay 0.", lambda s: s["usage_spool"]["lost"],
    ),
}  # fmt: skip


def _capacity(figures: dict[str, Any]) -> dict[str, float]:
    return {name: float(read(figures)) for name, (_doc, read) in CAPACITY.items()}


GATEWAYS = GatewayCollector()
GATEWAY_REGISTRY.register(GATEWAYS)


async def serve_metrics(scope: Scope, send: Send, token: str) -> None:
    headers = header_map(scope)
    client = scope.get("client")
    if not metrics_allowed(
        client_host=client[0] if client else None, authorization=headers.get("authorization", ""), token=token
    ):
        await respond(send, 403, b"metrics: loopback or bearer token only\n", [], b"text/plain; charset=utf-8")
        return
    await respond(send, 200, exposition(GATEWAY_REGISTRY, REGISTRY), [], CONTENT_TYPE.encode())


class _Chained(Collector):
    def __init__(self, registries: tuple[CollectorRegistry, ...]) -> None:
        self._registries = registries

    def collect(self) -> Iterator[Any]:
        for registry in self._registries:
            yield from registry.collect()


def merged(*registries: CollectorRegistry) -> CollectorRegistry:
    """A registry that reads several (their metric names are disjoint)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Chained(registries))
    return registry


def exposition(*registries: CollectorRegistry) -> bytes:
    """One Prometheus text page of several registries."""
    return generate_latest(merged(*registries))
