"""Metering's Prometheus figures (put on the platform's page by tokenway.metrics): billing lag per usage
shard, dead letters and stuck entries, the Stripe meter backlog, open reconciliation findings."""

from __future__ import annotations

from collections.abc import Iterator

import redis
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from foundation.ops_metrics import Family, gauge
from metering.lag import StreamLag, lag_total, meter_lag, usage_lag_by_stream
from metering.models import ReconciliationFinding
from metering.pipeline_health import usage_pipeline_state


def usage_figures(client: redis.Redis) -> Iterator[Family]:
    shards = usage_lag_by_stream(client)
    lag = lag_total(shards)
    yield gauge("tokenway_usage_stream_length", "Usage events in the stream (trimmed by age).", lag.length)
    yield gauge("tokenway_usage_stream_undelivered", "Usage events metering has not taken yet.", lag.undelivered)
    yield gauge("tokenway_usage_stream_pending", "Usage events taken but not yet acknowledged.", lag.pending)
    yield gauge(
        "tokenway_billing_lag_seconds",
        "Age of the oldest usage event not yet in the ledger.",
        lag.oldest_unbilled_s,
    )
    yield from _shard_gauges(shards)
    yield from _dead_letter_figures(client)


def billing_figures() -> Iterator[GaugeMetricFamily]:
    meters = meter_lag()
    yield gauge("tokenway_stripe_meter_unsent", "Postpaid meter events not yet accepted by Stripe.", meters.unsent)
    yield gauge(
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
    yield gauge("tokenway_reconciliation_findings_open", "Reconciliation findings not resolved.", open_findings)


def _dead_letter_figures(client: redis.Redis) -> Iterator[Family]:
    """Usage set aside (metering.dead_letters) and stuck unacknowledged (metering.pipeline_health)."""
    state = usage_pipeline_state(client)
    yield gauge("tokenway_usage_dead_letters", "Usage events dead-lettered and not yet replayed.", state.dead_letters)
    total = CounterMetricFamily("tokenway_usage_dead_lettered", "Usage events ever set aside as dead letters.")
    total.add_metric([], state.dead_lettered_total)
    yield total
    yield gauge("tokenway_usage_stuck", "Usage events taken and unacknowledged for over a minute.", state.stuck)


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
