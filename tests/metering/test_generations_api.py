"""``GET /api/v1/generations`` (the key's own) and ``/api/v1/tenants/<slug>/generations/`` (the tenant's):
newest first, keyset cursor, filters, precise 400s; rejected calls listed, never journaled."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from rest_framework.test import APIClient

from apikeys.models import ApiKey
from apikeys.services import api_keys_touch
from contracts.usage import Tokens
from metering.ingest import usage_ingest
from metering.models import Journal, UsageRecord
from metering.reconcile import check_usage_has_journal
from metering.selectors import tenant_usage
from tests.factories import issue_key
from tests.metering.conftest import make_event

pytestmark = pytest.mark.django_db

T0 = time.time() - 3600


def _key_client(plaintext: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    return client


def _rejected(tenant_id: int, key_id: int, **overrides):
    fields = {"status": "rejected", "http_status": 402, "error_code": "insufficient_balance", "tokens": Tokens(),
              "offering_id": None, "provider": None, "cost_micros": 0, "charge_micros": 0}  # fmt: skip
    return replace(make_event(tenant_id, key_id, **{**fields, **overrides}), prices=None)


@pytest.fixture
def keys(tenant):
    return {name: issue_key(tenant, name=name) for name in ("a", "b")}


def _walk(client: APIClient, url: str, **params) -> list[str]:
    seen, cursor = [], None
    for _ in range(50):
        response = client.get(url, {**params, **({"cursor": cursor} if cursor else {})})
        assert response.status_code == 200, response.json()
        body = response.json()
        seen += [item["id"] for item in body["data"]]
        assert body["has_more"] is (body["next_cursor"] is not None)
        if not body["has_more"]:
            return seen
        cursor = body["next_cursor"]
    raise AssertionError("pagination did not end")


def test_pagination_walks_every_record_once_newest_first_even_with_equal_times(tenant, keys):
    key, plaintext = keys["a"]
    events = [make_event(tenant.pk, key.pk, finished_at=T0 + i // 3) for i in range(23)]  # groups of 3 share a time
    usage_ingest(events=events)
    expected = list(
        UsageRecord.objects.filter(key_id=key.pk).order_by("-finished_at", "-id").values_list("request_id", flat=True)
    )
    assert len(expected) == 23
    assert _walk(_key_client(plaintext), "/api/v1/generations", limit=5) == expected
    first = _key_client(plaintext).get("/api/v1/generations").json()
    assert len(first["data"]) == 20 and first["has_more"] is True  # the default page


def test_a_key_sees_only_its_own_generations(tenant, other_tenant, keys):
    (key_a, plain_a), (key_b, plain_b) = keys["a"], keys["b"]
    usage_ingest(
        events=[
            make_event(tenant.pk, key_a.pk, request_id="req_a"),
            make_event(tenant.pk, key_b.pk, request_id="req_b"),
            make_event(other_tenant.pk, key_a.pk, request_id="req_foreign"),
        ]
    )
    assert _walk(_key_client(plain_a), "/api/v1/generations") == ["req_a"]
    assert _walk(_key_client(plain_b), "/api/v1/generations") == ["req_b"]
    refused = _key_client(plain_a).get("/api/v1/generations", {"key": key_b.pk})
    assert refused.status_code == 400 and refused.json()["error"] == {
        "code": "unknown_field",
        "message": "is not a known field",
        "param": "key",
    }
    assert APIClient().get("/api/v1/generations").status_code in (401, 403)


def test_session_lists_the_tenants_generations_with_filters(tenant, owner, keys, api_client_for):
    (key_a, _), (key_b, _) = keys["a"], keys["b"]
    usage_ingest(
        events=[
            make_event(tenant.pk, key_a.pk, request_id="ok_a", finished_at=T0 + 1),
            make_event(tenant.pk, key_b.pk, request_id="ok_b", model="glm-5.1", provider="zhipu", finished_at=T0 + 2),
            _rejected(tenant.pk, key_b.pk, request_id="rej_b", finished_at=T0 + 3),
        ]
    )
    client = api_client_for(owner)
    url = f"/api/v1/tenants/{tenant.slug}/generations/"
    assert _walk(client, url) == ["rej_b", "ok_b", "ok_a"]
    assert _walk(client, url, key=key_a.pk) == ["ok_a"]
    assert _walk(client, url, model="glm-5.1") == ["ok_b"]
    assert _walk(client, url, provider="deepseek") == ["ok_a"]
    assert _walk(client, url, status="rejected") == ["rej_b"]
    stamp = datetime.fromtimestamp(T0 + 2, tz=UTC).isoformat()
    assert _walk(client, url, since=stamp) == ["rej_b", "ok_b"]
    assert _walk(client, url, until=stamp) == ["ok_a"]
    [item] = client.get(url, {"status": "rejected"}).json()["data"]
    assert (item["status"], item["http_status"], item["error_code"], item["key_id"]) == (
        "rejected",
        402,
        "insufficient_balance",
        key_b.pk,
    )
    assert item["charge_micros"] == 0 and item["provider"] == ""
    assert "cost_micros" not in item  # provider cost is staff data (test_tenant_facing_cost)


@pytest.mark.parametrize(
    ("params", "param", "code"),
    [
        ({"cursor": "not-a-cursor!"}, "cursor", "invalid_cursor"),
        ({"cursor": "MTIzNDU"}, "cursor", "invalid_cursor"),  # base64 of "12345": no id part
        ({"limit": 0}, "limit", "invalid_min_value"),
        ({"limit": 1000}, "limit", "invalid_max_value"),
        ({"limit": "ten"}, "limit", "invalid"),
        ({"status": "exploded"}, "status", "invalid_choice"),
        ({"since": "yesterday"}, "since", "invalid"),
        ({"sort": "cost"}, "sort", "unknown_field"),
    ],
)
def test_bad_parameters_are_a_precise_400(tenant, owner, keys, api_client_for, params, param, code):
    usage_ingest(events=[make_event(tenant.pk, keys["a"][0].pk)])
    for client, url in [
        (_key_client(keys["a"][1]), "/api/v1/generations"),
        (api_client_for(owner), f"/api/v1/tenants/{tenant.slug}/generations/"),
    ]:
        response = client.get(url, params)
        assert response.status_code == 400, response.json()
        error = response.json()["error"]
        assert (error["code"], error["param"]) == (code, param) and error["message"]


def test_a_foreign_key_filter_is_400_and_an_outsider_sees_nothing(
    tenant, other_tenant, owner, outsider, keys, api_client_for
):
    foreign_key, _ = issue_key(other_tenant, name="theirs")
    usage_ingest(events=[make_event(tenant.pk, keys["a"][0].pk, request_id="ours")])
    mine = api_client_for(owner).get(f"/api/v1/tenants/{tenant.slug}/generations/", {"key": foreign_key.pk})
    assert mine.status_code == 400 and mine.json()["error"]["code"] == "unknown_key"
    assert mine.json()["error"]["param"] == "key"
    theirs = api_client_for(outsider)
    denied = theirs.get(f"/api/v1/tenants/{tenant.slug}/generations/")
    assert denied.status_code == 404 and denied.json()["error"]["code"] == "not_found"
    assert theirs.get(f"/api/v1/tenants/{other_tenant.slug}/generations/").json()["data"] == []
    probe = theirs.get(f"/api/v1/tenants/{other_tenant.slug}/generations/", {"key": keys["a"][0].pk})
    assert probe.status_code == 400 and probe.json()["error"]["code"] == "unknown_key"


def test_rejected_usage_has_no_journal_and_reconciliation_does_not_flag_it(tenant, keys):
    key, plaintext = keys["a"]
    usage_ingest(
        events=[_rejected(tenant.pk, key.pk, request_id="rej"), make_event(tenant.pk, key.pk, request_id="ok")]
    )
    assert set(Journal.objects.values_list("key", flat=True)) == {"usage:ok"}
    record = UsageRecord.objects.get(request_id="rej")
    assert (record.status, record.http_status, record.error_code, record.charge_micros) == (
        "rejected",
        402,
        "insufficient_balance",
        0,
    )
    assert check_usage_has_journal() == []
    start, end = datetime.fromtimestamp(time.time() - 60, tz=UTC), datetime.fromtimestamp(time.time() + 60, tz=UTC)
    [usage] = tenant_usage(tenant_id=tenant.pk, start=start, end=end, group="key")
    assert usage["requests"] == 1  # a refusal is listed, but it is not usage
    single = _key_client(plaintext).get("/api/v1/generation", {"id": "rej"}).json()
    assert single["status"] == "rejected" and single["error_code"] == "insufficient_balance"


def test_last_used_at_moves_to_the_newest_event_of_a_batch_and_never_back(tenant, keys):
    (key_a, _), (key_b, _) = keys["a"], keys["b"]
    usage_ingest(
        events=[make_event(tenant.pk, key_a.pk, finished_at=T0 + 5), _rejected(tenant.pk, key_a.pk, finished_at=T0 + 9)]
    )
    key_a.refresh_from_db()
    assert key_a.last_used_at == datetime.fromtimestamp(T0 + 9, tz=UTC)
    assert ApiKey.objects.get(pk=key_b.pk).last_used_at is None
    assert api_keys_touch(last_used={key_a.pk: datetime.fromtimestamp(T0, tz=UTC)}) == 0  # older: no write
    key_a.refresh_from_db()
    assert key_a.last_used_at == datetime.fromtimestamp(T0 + 9, tz=UTC)


def test_the_key_list_api_shows_last_used_at(tenant, owner, keys, api_client_for):
    key, _ = keys["a"]
    usage_ingest(events=[make_event(tenant.pk, key.pk, finished_at=T0)])
    listed = api_client_for(owner).get(f"/api/v1/tenants/{tenant.slug}/keys/").json()
    rows = listed if isinstance(listed, list) else listed.get("data", listed.get("results"))
    [row] = [r for r in rows if r["id"] == key.pk]
    assert datetime.fromisoformat(row["last_used_at"].replace("Z", "+00:00")) == datetime.fromtimestamp(T0, tz=UTC)
