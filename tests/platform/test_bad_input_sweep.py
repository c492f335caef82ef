"""Every POST/PUT/PATCH route under /api/v1/, called by its rightful caller with broken bodies: malformed
JSON is 400 ``invalid_json``, an oversize body is 413 ``payload_too_large``, a JSON array instead of an
object is 400, always in the error shape, and nothing is written. New routes are covered automatically."""

from __future__ import annotations

import hashlib
import hmac
import time

import pytest
from django.conf import settings
from django.urls import resolve

from tests.platform.url_walk import api_routes, fill_route, snapshot_rows

WRITE_METHODS = ("post", "put", "patch")
WEBHOOK = "/api/v1/stripe/webhook"
WEBHOOK_SECRET = "whsec_bad_input_sweep"
MALFORMED = b'{"name": "half an object",'
ARRAY = b'[{"name": "an object inside a list"}]'
DEEP = b'{"name": ' + b"[" * 1000 + b"1" + b"]" * 1000 + b"}"  # 4 KB that used to cost a 500 and ~3,000 log lines


def _write_endpoints(ids: dict[str, object]) -> list[tuple[str, str]]:
    endpoints = []
    for route in api_routes():
        url = fill_route(route, ids)
        view = resolve(url).func.view_class  # type: ignore[attr-defined]
        endpoints += [(method, url) for method in WRITE_METHODS if hasattr(view, method)]
    return endpoints


def _stripe_signature(payload: bytes) -> str:
    """Signed like Stripe signs, so the webhook gets past its authentication to the body."""
    at = int(time.time())
    digest = hmac.new(WEBHOOK_SECRET.encode(), f"{at}.".encode() + payload, hashlib.sha256).hexdigest()
    return f"t={at},v1={digest}"


def _send(client, method: str, url: str, body: bytes):
    headers = {"HTTP_STRIPE_SIGNATURE": _stripe_signature(body)} if url == WEBHOOK else {}
    return getattr(client, method)(url, data=body, content_type="application/json", **headers)


def _oversize() -> bytes:
    return b'{"name": "' + b"x" * settings.DATA_UPLOAD_MAX_MEMORY_SIZE + b'"}'


@pytest.fixture
def endpoints(victim):
    found = _write_endpoints(victim)
    assert ("post", WEBHOOK) in found and len(found) >= 10, found
    return found


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        pytest.param(MALFORMED, 400, "invalid_json", id="malformed-json"),
        pytest.param(_oversize, 413, "payload_too_large", id="oversize"),
        pytest.param(ARRAY, 400, None, id="array-not-object"),
        pytest.param(DEEP, 400, "invalid_json", id="nested-1000-deep"),
    ],
)
def test_broken_bodies_are_refused_precisely_and_write_nothing(
    body, status, code, endpoints, owner, api_client_for, settings
):
    settings.STRIPE_WEBHOOK_SECRET = WEBHOOK_SECRET
    payload = body() if callable(body) else body
    client = api_client_for(owner)
    before = snapshot_rows()
    for method, url in endpoints:
        response = _send(client, method, url, payload)
        assert response.status_code == status, (method, url, response.status_code, response.content[:300])
        error = response.json()["error"]
        assert set(error) == {"code", "message", "param"}, (method, url, error)
        assert code is None or error["code"] == code, (method, url, error)
        assert b"Traceback" not in response.content
    assert snapshot_rows() == before
