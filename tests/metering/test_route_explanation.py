"""The route explanation travels with the usage event into the usage record and GET /api/v1/generation."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from apikeys.services import api_key_issue
from contracts.redis_keys import generation
from contracts.route_explain import RouteCandidate
from metering.ingest import usage_ingest
from metering.models import UsageRecord
from tests.metering.conftest import make_event

pytestmark = pytest.mark.django_db(transaction=True)

CANDIDATES = (
    RouteCandidate("deepseek", 7, "winner", 0.0, {"ttft": 0.0}, ()),
    RouteCandidate("bargain-cloud", 9, "lost:flags", 8.4, {"cost": 0.2, "flags": 8.0}, ("price_mismatch",)),
    RouteCandidate("openai", 3, "dropped:not_allowed"),
)


def test_generation_record_carries_the_candidates_before_and_after_ingestion(tenant, redis_client):
    issued = api_key_issue(tenant=tenant, created_by=None, name="ci")
    event = make_event(tenant.pk, issued.api_key.pk, request_id="req_why", route_candidates=CANDIDATES)
    redis_client.set(generation("req_why"), event.to_json(), ex=600)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.plaintext}")
    before = client.get("/api/v1/generation", {"id": "req_why"}).json()
    usage_ingest(events=[event])
    after = client.get("/api/v1/generation", {"id": "req_why"}).json()
    assert after["ingested"] is True and before["ingested"] is False
    for record in (before, after):
        verdicts = [(c["provider"], c["verdict"]) for c in record["route_candidates"]]
        assert verdicts == [("deepseek", "winner"), ("bargain-cloud", "lost:flags"), ("openai", "dropped:not_allowed")]
        assert record["route_candidates"][1]["parts"] == {"cost": 0.2, "flags": 8.0}
    assert UsageRecord.objects.get(request_id="req_why").route_candidates[1]["flags"] == ["price_mismatch"]


def test_an_event_without_candidates_stores_an_empty_list(tenant):
    usage_ingest(events=[make_event(tenant.pk, request_id="req_old")])
    assert UsageRecord.objects.get(request_id="req_old").route_candidates == []
