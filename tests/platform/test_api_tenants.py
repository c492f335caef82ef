from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tenants.invitations import invitation_create
from tenants.models import Invitation, Membership, Tenant
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _error(response, status, code):
    assert response.status_code == status, response.content
    assert response.json()["error"]["code"] == code, response.json()
    return response.json()["error"]


def test_create_tenant_makes_the_creator_owner_and_duplicate_slug_is_refused(api_client_for):
    user = UserFactory()
    client = api_client_for(user)
    response = client.post("/api/v1/tenants/", {"slug": "initech", "name": "Initech"}, format="json")
    assert response.status_code == 201 and response.json()["role"] == "owner"
    assert Membership.objects.get(user=user).role == "owner"
    error = _error(client.post("/api/v1/tenants/", {"slug": "initech", "name": "X"}, format="json"), 400, "slug_taken")
    assert error["param"] == "slug"
    assert Tenant.objects.count() == 1


def test_user_sees_all_and_only_their_tenants(owner, outsider, api_client_for):
    Membership.objects.create(tenant=outsider.tenant, user=owner.user, role="viewer")
    slugs = [t["slug"] for t in api_client_for(owner).get("/api/v1/tenants/").json()]
    assert slugs == ["acme", "globex"]
    assert [t["slug"] for t in api_client_for(outsider).get("/api/v1/tenants/").json()] == ["globex"]


def test_bad_input_gives_stable_codes_and_changes_nothing(owner, api_client_for):
    client = api_client_for(owner)
    response = client.generic("POST", "/api/v1/tenants/", "{not json", content_type="application/json")
    _error(response, 400, "invalid_json")
    error = _error(client.patch("/api/v1/tenants/acme/", {"rpm_limt": 5}, format="json"), 400, "unknown_field")
    assert error["param"] == "rpm_limt"
    _error(client.patch("/api/v1/tenants/acme/", {"rpm_limit": "many"}, format="json"), 400, "invalid")
    big = '{"name": "' + "x" * 2_000_000 + '"}'
    _error(client.generic("POST", "/api/v1/tenants/", big, content_type="application/json"), 413, "payload_too_large")
    _error(client.get("/api/v1/no-such-thing/"), 404, "not_found")
    assert Tenant.objects.get().rpm_limit is None and Tenant.objects.count() == 1


def test_viewer_may_read_but_not_change_settings(viewer, api_client_for):
    client = api_client_for(viewer)
    assert client.get("/api/v1/tenants/acme/").json()["role"] == "viewer"
    _error(client.patch("/api/v1/tenants/acme/", {"name": "Mine"}, format="json"), 403, "permission_denied")
    assert Tenant.objects.get().name == "Acme"


def test_billing_member_may_change_billing_but_not_routing(tenant, api_client_for):
    from tests.factories import MembershipFactory

    billing = MembershipFactory(tenant=tenant, role="billing")
    client = api_client_for(billing)
    Tenant.objects.filter(pk=tenant.pk).update(stripe_customer_id="cus_on_file", stripe_payment_method_id="pm_on_file")
    assert client.patch("/api/v1/tenants/acme/", {"billing_mode": "postpaid"}, format="json").status_code == 200
    _error(client.patch("/api/v1/tenants/acme/", {"rpm_limit": 5}, format="json"), 403, "permission_denied")


def test_admin_cannot_touch_owner_and_last_owner_is_kept(owner, admin_member, developer, api_client_for):
    admin = api_client_for(admin_member)
    url = f"/api/v1/tenants/acme/members/{owner.pk}/"
    _error(admin.patch(url, {"role": "viewer"}, format="json"), 403, "permission_denied")
    _error(admin.delete(url), 403, "permission_denied")
    dev_url = f"/api/v1/tenants/acme/members/{developer.pk}/"
    _error(admin.patch(dev_url, {"role": "owner"}, format="json"), 403, "permission_denied")
    assert admin.patch(dev_url, {"role": "viewer"}, format="json").json()["role"] == "viewer"
    own = api_client_for(owner)
    _error(own.patch(url, {"role": "admin"}, format="json"), 400, "last_owner")
    _error(own.delete(url), 400, "last_owner")
    assert own.delete(dev_url).status_code == 204
    assert sorted(Membership.objects.values_list("role", flat=True)) == ["admin", "owner"]


def test_developer_cannot_remove_others_but_may_leave(developer, viewer, api_client_for):
    client = api_client_for(developer)
    _error(client.delete(f"/api/v1/tenants/acme/members/{viewer.pk}/"), 403, "permission_denied")
    assert client.delete(f"/api/v1/tenants/acme/members/{developer.pk}/").status_code == 204


def test_invitation_is_single_use(owner, api_client_for):
    response = api_client_for(owner).post(
        "/api/v1/tenants/acme/invitations/", {"email": "Bob@Example.test", "role": "developer"}, format="json"
    )
    assert response.status_code == 201
    token = response.json()["token"]
    stored = Invitation.objects.get()
    assert token not in stored.token_hash and len(stored.token_hash) == 64
    bob = api_client_for(UserFactory(email="bob@example.test"))
    joined = bob.post("/api/v1/invitations/accept/", {"token": token}, format="json")
    assert joined.status_code == 201 and joined.json() | {"role": "developer"} == joined.json()
    carol = api_client_for(UserFactory())
    _error(carol.post("/api/v1/invitations/accept/", {"token": token}, format="json"), 400, "invitation_used")
    assert Membership.objects.filter(tenant=owner.tenant).count() == 2


def test_expired_and_revoked_invitations_are_refused(owner, api_client_for):
    expired = invitation_create(actor=owner, email="a@example.test", role="viewer", ttl=timedelta(seconds=-1))
    revoked = invitation_create(actor=owner, email="b@example.test", role="viewer")
    assert api_client_for(owner).delete(f"/api/v1/tenants/acme/invitations/{revoked.invitation.pk}/").status_code == 204
    client = api_client_for(UserFactory())
    _error(
        client.post("/api/v1/invitations/accept/", {"token": expired.token}, format="json"), 400, "invitation_expired"
    )
    _error(client.post("/api/v1/invitations/accept/", {"token": revoked.token}, format="json"), 400, "invitation_used")
    _error(client.post("/api/v1/invitations/accept/", {"token": "nope"}, format="json"), 404, "invitation_not_found")
    assert Membership.objects.count() == 1
    assert Invitation.objects.get(pk=expired.invitation.pk).expires_at < timezone.now()


def test_admin_cannot_invite_an_owner(admin_member, api_client_for):
    response = api_client_for(admin_member).post(
        "/api/v1/tenants/acme/invitations/", {"email": "c@example.test", "role": "owner"}, format="json"
    )
    _error(response, 403, "permission_denied")
    assert not Invitation.objects.exists()


def test_token_authentication_for_automation(owner):
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    token = Token.objects.create(user=owner.user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert client.get("/api/v1/tenants/").json()[0]["slug"] == "acme"
