"""The platform's Prometheus figures: billing lag, Stripe sync, probe freshness, workers, tasks.

Computed when scraped (a few cheap queries), served at ``GET /metrics`` of the web process beside
the gateway's own metrics (routing.telemetry.metrics: same process, same registry) and by each worker that
has ``TOKENWAY_METRICS_PORT`` (tokenway.task_metrics). Alerts worth having: docs/operations.md.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import redis
from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from contracts.metrics_access import CONTENT_TYPE, metrics_allowed
from evaluation.freshness import probe_age_by_region
from metering.lag import StreamLag, lag_total, meter_lag, usage_lag_by_stream
from metering.models import ReconciliationFinding
from metering.pipeline_health import usage_pipeline_state
from routing.telemetry.metrics import GATEWAY_REGISTRY, merged
from tokenway.health import WORKER_HEARTBEAT_PREFIX
from tokenway.redis_client import get_redis
from tokenway.task_metrics import task_outcomes

log = logging.getLogger(__name__)


def _gauge(name: str, doc: str, value: float, labels: dict[str, str] | None = None) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, doc, labels=list(labels or {}))
    family.add_metric(list((labels or {}).values()), value)
    return family


class PlatformCollector(Collector):
    """Each part reports on its own: Redis down leaves the database figures, and the reverse."""

    def describe(self) -> list[GaugeMetricFamily]:
        return []  # registered without a scrape; the families appear when collected

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        up = GaugeMetricFamily("tokenway_dependency_up", "1 when the platform reached it.", labels=["dependency"])
        try:
            yield from self._redis_figures(get_redis())
            up.add_metric(["redis"], 1)
        except redis.RedisError as exc:
            log.warning("metrics: redis figures skipped: %s", exc)
            up.add_metric(["redis"], 0)
        try:
            yield from self._database_figures()
            up.add_metric(["postgresql"], 1)
        except DatabaseError as exc:
            log.warning("metrics: database figures skipped: %s", exc)
            up.add_metric(["postgresql"], 0)
        finally:
            # A worker's metrics port serves each scrape on a new thread: its connection must not outlive it.
            if not connection.in_atomic_block:
                connection.close()
        yield up

    def _redis_figures(self, client: redis.Redis) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        shards = usage_lag_by_stream(client)
        lag = lag_total(shards)
        yield _gauge("tokenway_usage_stream_length", "Usage events in the stream (trimmed by age).", lag.length)
        yield _gauge("tokenway_usage_stream_undelivered", "Usage events metering has not taken yet.", lag.undelivered)
        yield _gauge("tokenway_usage_stream_pending", "Usage events taken but not yet acknowledged.", lag.pending)
        yield _gauge(
            "tokenway_billing_lag_seconds",
            "Age of the oldest usage event not yet in the ledger.",
            lag.oldest_unbilled_s,
        )
        yield from _shard_gauges(shards)
        yield from _dead_letter_figures(client)
        workers = sum(1 for _ in client.scan_iter(f"{WORKER_HEARTBEAT_PREFIX}*"))
        yield _gauge("tokenway_workers_alive", "Celery workers with a fresh heartbeat.", workers)
        tasks = CounterMetricFamily(
            "tokenway_celery_tasks", "Celery task runs by task and final state.", labels=["task", "state"]
        )
        for (name, state), count in sorted(task_outcomes(client).items()):
            tasks.add_metric([name, state], count)
        yield tasks

    def _database_figures(self) -> Iterator[GaugeMetricFamily]:
        meters = meter_lag()
        yield _gauge("tokenway_stripe_meter_unsent", "Postpaid meter events not yet accepted by Stripe.", meters.unsent)
        yield _gauge(
            "tokenway_stripe_meter_lag_seconds",
            "Age of the oldest meter event not yet accepted.",
            meters.oldest_unsent_s,
        )
        failed = GaugeMetricFamily(
            "tokenway_stripe_meter_failed", "Meter events Stripe refused or that expired.", labels=["status"]
        )
        failed.add_metric(["rejected"], meters.rejected)
        failed.add_metric(["expired"], meters.expired)
        yield failed
        open_findings = ReconciliationFinding.objects.filter(resolved_at__isnull=True).count()
        yield _gauge("tokenway_reconciliation_findings_open", "Reconciliation findings not resolved.", open_findings)
        ages = GaugeMetricFamily(
            "tokenway_probe_age_seconds", "Seconds since the newest probe of each region started.", labels=["region"]
        )
        for region, age in sorted(probe_age_by_region().items()):
            ages.add_metric([region], age)
        yield ages


def _dead_letter_figures(client: redis.Redis) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
    """Usage set aside (metering.dead_letters) and stuck unacknowledged (metering.pipeline_health)."""
    state = usage_pipeline_state(client)
    yield _gauge("tokenway_usage_dead_letters", "Usage events dead-lettered and not yet replayed.", state.dead_letters)
    total = CounterMetricFamily("tokenway_usage_dead_lettered", "Usage events ever set aside as dead letters.")
    total.add_metric([], state.dead_lettered_total)
    yield total
    yield _gauge("tokenway_usage_stuck", "Usage events taken and unacknowledged for over a minute.", state.stuck)


def _shard_gauges(shards: dict[str, StreamLag]) -> Iterator[GaugeMetricFamily]:
    """The same figures per usage shard stream (the unlabelled ones above are their total)."""
    figures = {
        "tokenway_usage_shard_undelivered": ("Usage events metering has not taken yet, per shard.", "undelivered"),
        "tokenway_usage_shard_pending": ("Usage events taken but not yet acknowledged, per shard.", "pending"),
        "tokenway_usage_shard_lag_seconds": ("Age of the oldest unbilled usage event, per shard.", "oldest_unbilled_s"),
    }
    for name, (doc, attribute) in figures.items():
        family = GaugeMetricFamily(name, doc, labels=["stream"])
        for stream, lag in shards.items():
            family.add_metric([stream], getattr(lag, attribute))
        yield family


PLATFORM_REGISTRY = CollectorRegistry(auto_describe=False)
PLATFORM_REGISTRY.register(PlatformCollector())


# This process's figures (Python process and GC), the platform's, and the gateway's when it runs here.
PAGE = merged(REGISTRY, PLATFORM_REGISTRY, GATEWAY_REGISTRY)


def metrics_view(request: HttpRequest) -> HttpResponse:
    allowed = metrics_allowed(
        client_host=request.META.get("REMOTE_ADDR"),
        authorization=request.headers.get("Authorization", ""),
        token=settings.METRICS_TOKEN,
    )
    if not allowed:
        return HttpResponse("metrics: loopback or bearer token only\n", status=403, content_type="text/plain")
    return HttpResponse(generate_latest(PAGE), content_type=CONTENT_TYPE)
