"""Console request log: rejected calls listed with status and reason, each row opens the full record,
cursor pages, a status filter, both languages; another tenant's record is a 404."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest
from django.test import Client

from apikeys.models import ApiKey
from contracts.usage import Tokens
from metering.ingest import usage_ingest
from tests.factories import issue_key
from tests.metering.conftest import make_event

pytestmark = pytest.mark.django_db

T0 = time.time() - 600


def _client(user, language: str | None = None) -> Client:
    client = Client()
    client.force_login(user)
    if language:
        client.cookies["django_language"] = language
    return client


@pytest.fixture
def key(personas) -> ApiKey:
    return issue_key(personas.tenant, name="ci-bot")[0]


def _rejected(tenant_id: int, key_id: int, **overrides):
    fields = {"status": "rejected", "http_status": 429, "error_code": "key_rate_limited", "tokens": Tokens(),
              "offering_id": None, "provider": None, "cost_micros": 0, "charge_micros": 0}  # fmt: skip
    return replace(make_event(tenant_id, key_id, **{**fields, **overrides}), prices=None)


def test_rejected_calls_are_listed_with_status_and_reason_and_open_their_record(personas, key):
    usage_ingest(
        events=[
            make_event(personas.tenant.pk, key.pk, request_id="gen-ok", finished_at=T0),
            _rejected(personas.tenant.pk, key.pk, request_id="gen-rej", finished_at=T0 + 1),
        ]
    )
    page = _client(personas.developer).get("/console/acme/requests/").content.decode()
    assert page.index('data-request-id="gen-rej"') < page.index('data-request-id="gen-ok"')  # newest first
    assert "key_rate_limited" in page and "rejected 429" in page
    assert 'href="/console/acme/requests/gen-rej/"' in page
    detail = _client(personas.developer).get("/console/acme/requests/gen-rej/").content.decode()
    assert 'id="request-detail"' in detail and "key_rate_limited" in detail and "ci-bot" in detail
    assert "&quot;http_status&quot;: 429" in detail  # the full record, escaped
    fragment = _client(personas.owner).get("/console/acme/requests/?fragment=1&status=rejected").content.decode()
    assert "gen-rej" in fragment and "gen-ok" not in fragment


def test_the_log_and_the_record_speak_chinese(personas, key):
    usage_ingest(events=[_rejected(personas.tenant.pk, key.pk, request_id="gen-zh")])
    page = _client(personas.owner, "zh-hans").get("/console/acme/requests/").content.decode()
    assert "已拒绝 429" in page and "打开完整记录" in page
    detail = _client(personas.owner, "zh-hans").get("/console/acme/requests/gen-zh/").content.decode()
    assert "完整记录" in detail and "原因" in detail


def test_older_requests_page_with_a_cursor_and_a_bad_cursor_gives_the_first_page(personas, key):
    usage_ingest(
        events=[make_event(personas.tenant.pk, key.pk, request_id=f"gen-{i:02}", finished_at=T0 + i) for i in range(55)]
    )
    client = _client(personas.owner)
    first = client.get("/console/acme/requests/")
    cursor = first.context["next_cursor"]
    assert [r["id"] for r in first.context["rows"]][:2] == ["gen-54", "gen-53"] and cursor
    older = client.get("/console/acme/requests/", {"cursor": cursor})
    assert [r["id"] for r in older.context["rows"]] == [f"gen-{i:02}" for i in range(4, -1, -1)]
    assert older.context["next_cursor"] is None
    junk = client.get("/console/acme/requests/", {"cursor": "junk"})
    assert junk.status_code == 200 and junk.context["rows"][0]["id"] == "gen-54"


def test_another_tenants_record_is_404_and_nothing_leaks(personas, key):
    usage_ingest(events=[_rejected(personas.tenant.pk, key.pk, request_id="gen-secret")])
    outsider = _client(personas.outsider)
    assert outsider.get("/console/acme/requests/gen-secret/").status_code in (403, 404)
    assert outsider.get("/console/globex/requests/gen-secret/").status_code == 404
    assert "gen-secret" not in outsider.get("/console/globex/requests/").content.decode()
