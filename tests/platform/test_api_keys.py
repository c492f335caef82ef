from __future__ import annotations

import pytest
from django.conf import settings
from rest_framework.test import APIClient, APIRequestFactory

from apikeys.authentication import ApiKeyAuthentication
from apikeys.models import ApiKey
from apikeys.services import api_key_revoke
from contracts import redis_keys
from contracts.apikey_format import hash_key, is_well_formed
from tests.factories import ModelFactory, issue_key

pytestmark = pytest.mark.django_db
URL = "/api/v1/tenants/acme/keys/"


def _error(response, status, code):
    assert response.status_code == status, response.content
    assert response.json()["error"]["code"] == code
    return response.json()["error"]


def test_key_is_shown_once_and_listed_by_prefix_and_last_four(
    owner, api_client_for, redis_client, django_capture_on_commit_callbacks
):
    client = api_client_for(owner)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            URL, {"name": "prod", "rpm_limit": 60, "monthly_budget_micros": 10_000_000}, format="json"
        )
    assert response.status_code == 201
    assert response["Cache-Control"] == "no-store"
    key = response.json()["key"]
    assert is_well_formed(key)
    listed = client.get(URL).json()
    assert [(k["name"], k["prefix"], k["last_four"]) for k in listed] == [("prod", key[:12], key[-4:])]
    assert key not in str(listed) and "key_hash" not in listed[0]
    assert redis_client.get(redis_keys.key_record(hash_key(key, settings.API_KEY_PEPPER))) is not None


def test_developer_key_cannot_exceed_the_developer_role(developer, api_client_for):
    client = api_client_for(developer)
    error = _error(client.post(URL, {"name": "x", "usage_read": True}, format="json"), 403, "scope_exceeds_role")
    assert error["param"] == "usage_read"
    response = client.post(URL, {"name": "x"}, format="json")
    assert response.status_code == 201 and response.json()["usage_read"] is False
    assert ApiKey.objects.count() == 1


def test_viewer_cannot_create_keys_and_allow_list_must_name_known_models(viewer, owner, api_client_for):
    _error(api_client_for(viewer).post(URL, {"name": "x"}, format="json"), 403, "permission_denied")
    client = api_client_for(owner)
    _error(client.post(URL, {"name": "x", "allowed_models": ["nope"]}, format="json"), 400, "unknown_model")
    ModelFactory(slug="glm-5.1")
    response = client.post(
        URL, {"name": "x", "allowed_models": ["glm-5.1"], "allowed_route_modes": ["cost"]}, format="json"
    )
    assert response.json()["allowed_models"] == ["glm-5.1"]
    _error(client.post(URL, {"name": "x", "scopes": "all"}, format="json"), 400, "unknown_field")


def test_developer_manages_own_keys_only(owner, developer, api_client_for):
    theirs, _ = issue_key(owner.tenant, created_by=owner.user)
    mine, _ = issue_key(developer.tenant, created_by=developer.user, usage_read=False)
    client = api_client_for(developer)
    _error(client.patch(f"{URL}{theirs.pk}/", {"rpm_limit": 1}, format="json"), 403, "permission_denied")
    _error(client.delete(f"{URL}{theirs.pk}/"), 403, "permission_denied")
    assert client.patch(f"{URL}{mine.pk}/", {"rpm_limit": 7}, format="json").json()["rpm_limit"] == 7
    assert ApiKey.objects.get(pk=theirs.pk).rpm_limit is None


def test_revoke_and_rotate_through_the_api(owner, api_client_for, redis_client, django_capture_on_commit_callbacks):
    client = api_client_for(owner)
    api_key, _ = issue_key(owner.tenant, created_by=owner.user)
    with django_capture_on_commit_callbacks(execute=True):
        rotated = client.post(f"{URL}{api_key.pk}/rotate/", {"grace_seconds": 60}, format="json")
    assert rotated.status_code == 201 and rotated.json()["rotated_from"] == api_key.pk
    assert is_well_formed(rotated.json()["key"])
    with django_capture_on_commit_callbacks(execute=True):
        assert client.delete(f"{URL}{api_key.pk}/").json()["revoked_at"] is not None
    assert redis_client.get(redis_keys.key_record(api_key.key_hash)) is None
    _error(client.post(f"{URL}{api_key.pk}/rotate/", {}, format="json"), 400, "key_revoked")


def test_api_key_authentication_checks_format_then_hash_and_refuses_revoked(tenant, django_assert_num_queries):
    api_key, plaintext = issue_key(tenant)
    auth = ApiKeyAuthentication()
    factory = APIRequestFactory()

    def request(**headers):
        from rest_framework.request import Request

        return Request(factory.get("/api/v1/key", **headers))

    principal, found = auth.authenticate(request(HTTP_AUTHORIZATION=f"Bearer {plaintext}"))
    assert found == api_key and principal.tenant == tenant
    assert auth.authenticate(request(HTTP_X_API_KEY=plaintext))[1] == api_key
    assert auth.authenticate(request()) is None
    bad = plaintext[:-1] + ("A" if plaintext[-1] != "A" else "B")
    with django_assert_num_queries(0), pytest.raises(Exception, match="invalid, revoked or expired"):
        auth.authenticate(request(HTTP_X_API_KEY=bad))
    api_key_revoke(key=api_key)
    with pytest.raises(Exception, match="invalid, revoked or expired") as info:
        auth.authenticate(request(HTTP_AUTHORIZATION=f"Bearer {plaintext}"))
    assert plaintext not in str(info.value)


def test_api_key_cannot_use_the_management_api(tenant):
    _, plaintext = issue_key(tenant)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    assert client.get("/api/v1/tenants/").status_code in (401, 403)


def test_only_admins_extend_or_clear_expiry_and_a_rotated_or_revoked_key_is_never_revived(
    owner, developer, api_client_for, django_capture_on_commit_callbacks
):
    from datetime import timedelta

    from django.utils import timezone

    soon = timezone.now() + timedelta(days=1)
    mine, _ = issue_key(developer.tenant, created_by=developer.user, usage_read=False)
    ApiKey.objects.filter(pk=mine.pk).update(expires_at=soon)
    dev = api_client_for(developer)
    later = (soon + timedelta(days=30)).isoformat()
    _error(dev.patch(f"{URL}{mine.pk}/", {"expires_at": None}, format="json"), 403, "permission_denied")
    _error(dev.patch(f"{URL}{mine.pk}/", {"expires_at": later}, format="json"), 403, "permission_denied")
    assert ApiKey.objects.get(pk=mine.pk).expires_at == soon
    earlier = (soon - timedelta(hours=1)).isoformat()
    assert dev.patch(f"{URL}{mine.pk}/", {"expires_at": earlier}, format="json").status_code == 200  # shortening

    admin = api_client_for(owner)
    assert admin.patch(f"{URL}{mine.pk}/", {"expires_at": later}, format="json").status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        assert admin.post(f"{URL}{mine.pk}/rotate/", {"grace_seconds": 60}, format="json").status_code == 201
    grace_end = ApiKey.objects.get(pk=mine.pk).expires_at
    _error(admin.patch(f"{URL}{mine.pk}/", {"expires_at": None}, format="json"), 409, "key_rotated")
    _error(admin.patch(f"{URL}{mine.pk}/", {"expires_at": later}, format="json"), 409, "key_rotated")
    assert ApiKey.objects.get(pk=mine.pk).expires_at == grace_end

    with django_capture_on_commit_callbacks(execute=True):
        admin.delete(f"{URL}{mine.pk}/")
    _error(admin.patch(f"{URL}{mine.pk}/", {"rpm_limit": 5}, format="json"), 409, "key_revoked")
    assert ApiKey.objects.get(pk=mine.pk).rpm_limit is None
