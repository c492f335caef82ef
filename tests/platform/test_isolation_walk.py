"""Every /api/v1/ route x method, called by a member of another tenant with the victim's ids: 404 or 405,
and nothing changes in the database. New routes are covered automatically (walk of get_resolver())."""

from __future__ import annotations

import pytest

from tests.platform.url_walk import api_routes, fill_route, snapshot_rows

METHODS = ("get", "post", "put", "patch", "delete")
# Routes without a tenant in the path: they act on the caller's own data or are public by design.
TENANT_AGNOSTIC = {
    "api/v1/tenants/",
    "api/v1/invitations/accept/",
    "api/v1/catalog/providers/",
    "api/v1/catalog/models/",
    "api/v1/catalog/offerings/",
}
# Routes other teams own that authenticate with an API key, a webhook signature, or are public
# (checked by their own tests). Prefixes; a tenant-scoped route must never be listed here.
NOT_SESSION_SCOPED = ("api/v1/generation", "api/v1/key", "api/v1/leaderboard", "api/v1/stripe/webhook")
BODY = {
    "name": "pwned",
    "role": "owner",
    "email": "x@example.test",
    "slug": "pwned",
    "rpm_limit": 1,
    "secret": "sk-attacker-0000",
    "provider": "victim-provider",
    "grace_seconds": 0,
    "token": "x",
}


def test_walk_finds_every_tenant_route():
    routes = api_routes()
    assert "api/v1/tenants/<slug:tenant_slug>/keys/<int:key_id>/rotate/" in routes
    assert set(TENANT_AGNOSTIC) <= set(routes)


@pytest.mark.django_db
def test_outsider_gets_404_everywhere_and_nothing_changes(victim, outsider, api_client_for):
    client = api_client_for(outsider)
    routes = [r for r in api_routes() if r not in TENANT_AGNOSTIC and not r.startswith(NOT_SESSION_SCOPED)]
    unscoped = [r for r in routes if "<" not in r]
    assert not unscoped, f"routes without a tenant in the path must be listed in TENANT_AGNOSTIC: {unscoped}"
    before = snapshot_rows()
    checked = 0
    for route in routes:
        url = fill_route(route, victim)
        for method in METHODS:
            response = getattr(client, method)(url, BODY, format="json")
            assert response.status_code in (404, 405), (method.upper(), url, response.status_code, response.content)
            assert response.json()["error"]["code"] in ("not_found", "method_not_allowed"), (method, url)
            checked += 1
    assert checked >= 40
    assert snapshot_rows() == before


@pytest.mark.django_db
def test_anonymous_is_refused_everywhere(victim, client):
    before = snapshot_rows()
    for route in api_routes():
        if (route in TENANT_AGNOSTIC and route.startswith("api/v1/catalog/")) or route.startswith(NOT_SESSION_SCOPED):
            continue
        for method in METHODS:
            response = getattr(client, method)(fill_route(route, victim), BODY, content_type="application/json")
            assert response.status_code in (401, 403, 405), (method, route, response.status_code)
    assert snapshot_rows() == before
