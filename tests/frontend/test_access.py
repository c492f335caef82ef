"""Who may open which page: anonymous -> login, outsider -> 404, role limits -> 403, staff -> ops."""

from __future__ import annotations

import pytest
from django.urls import reverse

TENANT_PAGES = ["overview", "keys", "team", "credentials", "routing", "usage", "requests", "playground", "summary"]


@pytest.mark.parametrize("name", ["home", "leaderboard"])
def test_leaderboard_is_public(client, catalog, name):
    response = client.get(reverse(f"frontend:{name}"))
    assert response.status_code == 200
    assert b"DeepSeek V4 Flash" in response.content


def test_model_and_provider_pages_are_public(client, catalog):
    assert client.get(reverse("frontend:model", args=["deepseek-v4-flash"])).status_code == 200
    assert client.get(reverse("frontend:provider", args=["deepseek"])).status_code == 200


def test_unknown_model_and_provider_are_404(client, catalog):
    assert client.get(reverse("frontend:model", args=["nope"])).status_code == 404
    assert client.get(reverse("frontend:provider", args=["nope"])).status_code == 404


@pytest.mark.parametrize("name", [*TENANT_PAGES, "billing"])
def test_anonymous_is_sent_to_login(client, personas, name):
    response = client.get(reverse(f"frontend:{name}", args=["acme"]))
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


@pytest.mark.parametrize("name", [*TENANT_PAGES, "billing"])
def test_other_tenant_is_invisible(client, personas, name):
    client.force_login(personas.outsider)
    assert client.get(reverse(f"frontend:{name}", args=["acme"])).status_code == 404


@pytest.mark.parametrize("name", TENANT_PAGES)
def test_developer_opens_tenant_pages(client, personas, name):
    client.force_login(personas.developer)
    assert client.get(reverse(f"frontend:{name}", args=["acme"])).status_code == 200


def test_developer_may_not_see_billing(client, personas):
    client.force_login(personas.developer)
    response = client.get(reverse("frontend:billing", args=["acme"]))
    assert response.status_code == 403
    assert b"Developer" in response.content


@pytest.mark.parametrize("name", [*TENANT_PAGES, "billing"])
def test_owner_opens_every_tenant_page(client, personas, name):
    client.force_login(personas.owner)
    assert client.get(reverse(f"frontend:{name}", args=["acme"])).status_code == 200


def test_ops_dashboard_is_staff_only(client, personas):
    url = reverse("frontend:ops-billing")
    assert client.get(url)["Location"].startswith("/accounts/login/")
    client.force_login(personas.owner)
    assert client.get(url).status_code == 404
    client.force_login(personas.staff)
    response = client.get(url)
    assert response.status_code == 200
    assert b"Billing latency p50" in response.content


def test_console_index_redirects_to_first_tenant_or_creation(client, personas):
    client.force_login(personas.developer)
    assert client.get(reverse("frontend:console"))["Location"] == "/console/acme/"
    from tests.frontend.conftest import make_user

    client.force_login(make_user("new@nowhere.test"))
    assert client.get(reverse("frontend:console"))["Location"] == "/console/new/"


def test_developer_cannot_revoke_an_owners_key(client, personas, redis_client):
    from apikeys.services import api_key_issue

    issued = api_key_issue(tenant=personas.tenant, created_by=personas.owner, name="prod")
    client.force_login(personas.developer)
    response = client.post(reverse("frontend:key-revoke", args=["acme", issued.api_key.pk]))
    assert response.status_code == 403
    issued.api_key.refresh_from_db()
    assert issued.api_key.revoked_at is None


def test_outsider_cannot_revoke_a_key(client, personas, redis_client):
    from apikeys.services import api_key_issue

    issued = api_key_issue(tenant=personas.tenant, created_by=personas.owner, name="prod")
    client.force_login(personas.outsider)
    assert client.post(reverse("frontend:key-revoke", args=["acme", issued.api_key.pk])).status_code == 404
    issued.api_key.refresh_from_db()
    assert issued.api_key.revoked_at is None


def test_sign_in_lands_staff_on_the_billing_dashboard_and_members_in_the_console(client, personas):
    from tests.frontend.conftest import PASSWORD

    response = client.post("/accounts/login/", {"username": personas.staff.email, "password": PASSWORD})
    assert response.status_code == 302 and client.get(response["Location"])["Location"] == "/ops/billing/"
    client.logout()
    response = client.post("/accounts/login/", {"username": personas.developer.email, "password": PASSWORD})
    assert client.get(response["Location"])["Location"] == "/console/acme/"


def test_ops_tenant_drilldown_is_staff_only(client, personas):
    url = f"/ops/billing/tenants/{personas.tenant.pk}/"
    client.force_login(personas.owner)
    assert client.get(url).status_code == 404
    client.force_login(personas.staff)
    assert client.get(url).status_code == 200
    assert client.get("/ops/billing/tenants/999999/").status_code == 404
