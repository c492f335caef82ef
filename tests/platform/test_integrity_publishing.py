"""Integrity before traffic, platform side: the catalog snapshot the gateway reads marks an offering
``integrity_pending`` until evaluation's price-truth and quality-canary probes have both run since its
current price took effect; the run that completes them republishes the catalog; a price change marks
it pending again. A probe that failed (HTTP error) does not count; a wrong canary answer does."""

from __future__ import annotations

import datetime as dt

import pytest
from django.conf import settings
from django.utils import timezone

from catalog.models import Offering
from catalog.services import catalog_apply, integrity_probes_ran
from contracts import redis_keys
from contracts.catalog_file import parse_catalog
from contracts.snapshot import CatalogSnapshot
from evaluation.models import ProbeResult
from evaluation.services.results import _integrity_ran
from tests.conftest import FIXTURES

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.local_servers]


def _apply(text: str) -> None:
    catalog_apply(spec=parse_catalog(text, filename="small.yaml", sim_base_url=settings.SIM_BASE_URL))


def _pending(redis_client) -> dict[str, bool]:
    snapshot = CatalogSnapshot.from_json(redis_client.get(redis_keys.CATALOG_SNAPSHOT))
    return {f"{o.model}@{o.provider}": o.integrity_pending for o in snapshot.offerings}


def _row(offering_id: int, kind: str, at: dt.datetime, error: str = "") -> ProbeResult:
    return ProbeResult(offering_id=offering_id, region="beijing", kind=kind, started_at=at, error_class=error)


def test_an_offering_is_routable_once_its_integrity_probes_ran_since_its_price(redis_client):
    text = (FIXTURES / "small.yaml").read_text(encoding="utf-8")
    _apply(text)
    assert all(_pending(redis_client).values())  # new offerings: nothing probed yet
    offering = Offering.objects.select_related("model", "provider").order_by("pk").first()
    assert offering is not None
    name = f"{offering.model.slug}@{offering.provider.slug}"
    now = timezone.now()

    failed = _integrity_ran([_row(offering.pk, "price", now), _row(offering.pk, "quality", now, "timeout")])
    assert integrity_probes_ran(ran=failed) == []  # the canary did not run: still pending
    assert _pending(redis_client)[name]

    wrong = _integrity_ran([_row(offering.pk, "quality", now, "wrong_answer"), _row(offering.pk, "cache", now)])
    assert integrity_probes_ran(ran=wrong) == [offering.pk]
    pending = _pending(redis_client)  # republished on commit
    assert not pending[name]
    assert all(v for k, v in pending.items() if k != name)

    price = offering.prices.order_by("-version").first()
    assert price is not None
    changed = text.replace(f"input: {price.input}", f"input: {price.input * 2}", 1)
    _apply(changed)
    assert offering.prices.count() == 2  # a new price version
    assert _pending(redis_client)[name]  # changed: its probes must run again

    later = timezone.now()
    assert integrity_probes_ran(ran={(offering.pk, "price"): later, (offering.pk, "quality"): later}) == [offering.pk]
    assert not _pending(redis_client)[name]
    upstream = offering.upstream_model
    _apply(changed.replace(f"upstream_model: {upstream}", f"upstream_model: {upstream}-v2", 1))
    offering.refresh_from_db()
    assert offering.upstream_model == f"{upstream}-v2"  # another model behind the same offering
    assert _pending(redis_client)[name]
