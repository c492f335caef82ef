"""The console's request record shows why the gateway chose its provider (the route explanation)."""

from __future__ import annotations

import pytest
from django.test import Client

from contracts.route_explain import RouteCandidate
from metering.ingest import usage_ingest
from tests.factories import issue_key
from tests.metering.conftest import make_event

pytestmark = pytest.mark.django_db

CANDIDATES = (
    RouteCandidate("deepseek", 7, "winner", 0.0, {"ttft": 0.0}, ()),
    RouteCandidate("bargain-cloud", 9, "lost:flags", 8.4, {"cost": 0.2, "flags": 8.0}, ("price_mismatch",)),
    RouteCandidate("openai", 3, "dropped:not_allowed"),
)


@pytest.mark.parametrize(("language", "heading"), [(None, "Why this provider"), ("zh-hans", "为什么选择这个提供商")])
def test_request_detail_lists_candidates_with_verdicts_parts_and_flags(personas, language, heading):
    key = issue_key(personas.tenant, name="ci-bot")[0]
    event = make_event(
        personas.tenant.pk,
        key.pk,
        request_id="gen-why",
        route_reason="balanced:deepseek:ttft",
        route_candidates=CANDIDATES,
    )
    usage_ingest(events=[event])
    client = Client()
    client.force_login(personas.developer)
    if language:
        client.cookies["django_language"] = language
    page = client.get("/console/acme/requests/gen-why/").content.decode()
    assert 'id="route-candidates"' in page and heading in page and "balanced:deepseek:ttft" in page
    row = page[page.index('data-provider="bargain-cloud"') :]
    row = row[: row.index("</tr>")]
    assert "lost:flags" in row and "flags 8.0" in row and "price_mismatch" in row
    assert "dropped:not_allowed" in page


def test_a_record_without_candidates_shows_no_table(personas):
    key = issue_key(personas.tenant, name="ci-bot")[0]
    usage_ingest(events=[make_event(personas.tenant.pk, key.pk, request_id="gen-old")])
    client = Client()
    client.force_login(personas.developer)
    assert 'id="route-candidates"' not in client.get("/console/acme/requests/gen-old/").content.decode()
