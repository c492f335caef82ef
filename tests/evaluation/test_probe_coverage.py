"""evaluation.selectors.ops.probe_coverage: per configured region, offerings probed in the last hour of the active ones."""

from __future__ import annotations

import datetime as dt

import pytest

from evaluation.models import ProbeResult
from evaluation.selectors.ops import COVERAGE_WINDOW, RegionCoverage, probe_coverage
from tests.factories import OfferingFactory

pytestmark = pytest.mark.django_db

NOW = dt.datetime(2026, 3, 10, 12, 0, tzinfo=dt.UTC)


def _probe(offering_id: int, region: str, started_at: dt.datetime) -> ProbeResult:
    return ProbeResult.objects.create(
        offering_id=offering_id, region=region, kind="performance", variant="1k", started_at=started_at
    )


def test_coverage_lists_every_region_with_zeros_before_any_probe(settings):
    settings.TOKENWAY_REGIONS = ["beijing", "shanghai"]
    OfferingFactory.create_batch(2)
    assert probe_coverage(now=NOW) == [
        RegionCoverage("beijing", offerings=0, probes=0, active=2),
        RegionCoverage("shanghai", offerings=0, probes=0, active=2),
    ]


def test_coverage_counts_distinct_offerings_and_probes_inside_the_window(settings):
    settings.TOKENWAY_REGIONS = ["beijing", "shanghai"]
    first, second, disabled = OfferingFactory.create_batch(3)
    disabled.status = "disabled"
    disabled.save(update_fields=["status"])
    start = NOW - COVERAGE_WINDOW
    _probe(first.pk, "beijing", start)  # the window's start counts
    _probe(first.pk, "beijing", NOW - dt.timedelta(minutes=5))
    _probe(second.pk, "beijing", NOW - dt.timedelta(minutes=1))
    _probe(second.pk, "shanghai", start - dt.timedelta(seconds=1))  # too old
    _probe(first.pk, "chengdu", NOW)  # a region no longer configured is not listed
    assert probe_coverage(now=NOW) == [
        RegionCoverage("beijing", offerings=2, probes=3, active=2),
        RegionCoverage("shanghai", offerings=0, probes=0, active=2),
    ]
