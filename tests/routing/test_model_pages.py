"""``GET /v1/models`` pages as Anthropic's Models API does (``limit``, ``after_id``, ``before_id``), with
the whole list when none is given (OpenAI's SDK sends none); a value it cannot honour is a 400 naming it."""

from __future__ import annotations

import pytest
import requests


def _get(gateway, tenant, query: str = "", **headers: str) -> requests.Response:
    url = f"{gateway.base_url}/v1/models{query}"
    return requests.get(url, headers={"authorization": f"Bearer {tenant.key}", **headers}, timeout=10)


def test_without_parameters_the_whole_list_in_one_page(gateway, tenant, oai):
    page = _get(gateway, tenant).json()
    assert page["has_more"] is False and len(page["data"]) > 20
    assert "text-embedding-3-small" in [m.id for m in oai.models.list()]


def test_limit_and_after_id_walk_the_list_in_order(gateway, tenant):
    everything = [m["id"] for m in _get(gateway, tenant).json()["data"]]
    walked, query = [], "?limit=7"
    while True:
        page = _get(gateway, tenant, query).json()
        assert len(page["data"]) <= 7
        walked += [m["id"] for m in page["data"]]
        if not page["has_more"]:
            break
        query = f"?limit=7&after_id={page['last_id']}"
    assert walked == everything


def test_before_id_gives_the_entries_just_before(gateway, tenant):
    everything = [m["id"] for m in _get(gateway, tenant).json()["data"]]
    page = _get(gateway, tenant, f"?limit=3&before_id={everything[5]}").json()
    assert [m["id"] for m in page["data"]] == everything[2:5] and page["has_more"] is True


def test_the_anthropic_sdk_pages_through_every_model(gateway, tenant, claude):
    everything = [m["id"] for m in _get(gateway, tenant).json()["data"]]
    assert [m.id for m in claude.models.list(limit=5)] == everything  # auto-pagination over after_id


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ("?limit=0", "limit"),
        ("?limit=1001", "limit"),
        ("?limit=ten", "limit"),
        ("?after_id=nope", "after_id"),
        ("?order=desc", "order"),
        ("?limit=2&limit=3", "limit"),
        ("?after_id=gpt-5&before_id=gpt-5", "before_id"),
    ],
)
def test_a_parameter_it_cannot_honour_is_a_400_naming_it(gateway, tenant, query, param):
    response = _get(gateway, tenant, query)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["param"] == param and param in error["message"]
    anthropic = _get(gateway, tenant, query, **{"anthropic-version": "2023-06-01"})
    assert anthropic.status_code == 400 and anthropic.json()["type"] == "error"


UNSERVED = [
    "/v1/completions",
    "/v1/moderations",
    "/v1/images/generations",
    "/v1/audio/speech",
    "/v1/audio/transcriptions",
    "/v1/batches",
    "/v1/files",
]


@pytest.mark.parametrize("path", UNSERVED)
def test_openais_other_endpoints_say_they_are_not_served(gateway, tenant, path):
    response = requests.post(f"{gateway.base_url}{path}", json={}, headers={"authorization": f"Bearer {tenant.key}"})
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["code"] == "endpoint_not_served" and error["type"] == "invalid_request_error"
    assert path in error["message"] and "not served" in error["message"] and "/v1/embeddings" in error["message"]
    assert response.headers["x-request-id"]


def test_an_unknown_path_is_a_plain_404(gateway, tenant):
    response = requests.get(f"{gateway.base_url}/v1/nothing-here", headers={"authorization": f"Bearer {tenant.key}"})
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
