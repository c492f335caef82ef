"""Evaluation's Prometheus figures (put on the platform's page by tokenway.metrics): probe freshness."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily

from evaluation.freshness import probe_age_by_region


def probe_figures() -> Iterator[GaugeMetricFamily]:
    ages = GaugeMetricFamily(
        "tokenway_probe_age_seconds", "Seconds since the newest probe of each region started.", labels=["region"]
    )
    for region, age in sorted(probe_age_by_region().items()):
        ages.add_metric([region], age)
    yield ages
