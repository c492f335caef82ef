"""Invitations through the management API: the emailed link, re-send instead of a duplicate, revoke,
and denials that change nothing."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from devtools.ports import free_port
from tenants.invitations import invitation_create
from tenants.models import Invitation, Membership
from tenants.selectors import invitation_by_token
from tests.factories import UserFactory
from tests.platform.url_walk import snapshot_rows

pytestmark = pytest.mark.django_db
URL = "/api/v1/tenants/acme/invitations/"
LINK = re.compile(r"https?://\S+/accounts/invitations/[\w-]+/")


def _error(response, status, code):
    assert response.status_code == status, response.content
    assert response.json()["error"]["code"] == code, response.json()


def _invite(client, email="bob@example.test", role="developer"):
    return client.post(URL, {"email": email, "role": role}, format="json")


def test_invite_emails_an_absolute_link_that_opens_the_acceptance_page(owner, api_client_for, client):
    response = _invite(api_client_for(owner), email="Bob@Example.test")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["resent"] is False and body["email_sent"] is True
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["bob@example.test"] and "Acme" in message.subject
    (link,) = LINK.findall(message.body)
    assert link == body["url"] == f"http://testserver/accounts/invitations/{body['token']}/"
    assert "7 days" in message.body
    page = client.get(link.removeprefix("http://testserver"))
    assert page.status_code == 200 and b'data-state="signup"' in page.content


def test_site_url_setting_makes_the_link(owner, api_client_for, settings):
    settings.TOKENWAY_SITE_URL = "https://tokenway.example/"
    body = _invite(api_client_for(owner)).json()
    assert body["url"].startswith("https://tokenway.example/accounts/invitations/")
    assert body["url"] in mail.outbox[0].body


def test_reinvite_resends_with_a_fresh_link_and_expiry_instead_of_a_duplicate(owner, api_client_for):
    client = api_client_for(owner)
    first = _invite(client, role="viewer").json()
    Invitation.objects.update(expires_at=timezone.now() + timedelta(hours=1))
    second = _invite(client, email="BOB@example.test", role="developer")
    assert second.status_code == 200 and second.json()["resent"] is True
    stored = Invitation.objects.get()
    assert stored.pk == first["id"] == second.json()["id"] and stored.role == "developer"
    assert stored.expires_at > timezone.now() + timedelta(days=6)
    assert len(mail.outbox) == 2 and second.json()["token"] in mail.outbox[1].body
    assert invitation_by_token(token=first["token"]) is None  # the earlier link no longer works
    assert invitation_by_token(token=second.json()["token"]) == stored


def test_an_expired_pending_invitation_is_resent_too(owner):
    expired = invitation_create(actor=owner, email="a@example.test", role="viewer", ttl=timedelta(seconds=-1))
    again = invitation_create(actor=owner, email="a@example.test", role="viewer")
    assert again.resent and again.invitation.pk == expired.invitation.pk
    assert Invitation.objects.count() == 1 and again.invitation.expires_at > timezone.now()


def test_after_revoke_a_new_invitation_is_created(owner, api_client_for):
    client = api_client_for(owner)
    first = _invite(client).json()
    assert client.delete(f"{URL}{first['id']}/").status_code == 204
    assert _invite(client).status_code == 201
    assert Invitation.objects.count() == 2


def test_inviting_an_existing_member_is_a_clear_error(owner, developer, api_client_for):
    client = api_client_for(owner)
    before = snapshot_rows()
    _error(_invite(client, email=developer.user.email.upper()), 400, "already_member")
    assert snapshot_rows() == before and mail.outbox == []


@pytest.mark.parametrize("persona", ["developer", "viewer"])
def test_members_without_the_right_may_not_invite(persona, request, api_client_for):
    client = api_client_for(request.getfixturevalue(persona))
    before = snapshot_rows()
    _error(_invite(client), 403, "permission_denied")
    assert snapshot_rows() == before and mail.outbox == []


def test_outsider_may_not_invite(owner, outsider, api_client_for):
    client = api_client_for(outsider)
    before = snapshot_rows()
    _error(_invite(client), 404, "not_found")
    assert snapshot_rows() == before and mail.outbox == []


@pytest.mark.parametrize(
    ("persona", "status", "code"),
    [("developer", 403, "permission_denied"), ("viewer", 403, "permission_denied"), ("outsider", 404, "not_found")],
)
def test_revoke_is_refused_without_the_right(owner, persona, status, code, request, api_client_for):
    issued = invitation_create(actor=owner, email="c@example.test", role="viewer")
    client = api_client_for(request.getfixturevalue(persona))
    before = snapshot_rows()
    _error(client.delete(f"{URL}{issued.invitation.pk}/"), status, code)
    assert snapshot_rows() == before


def test_admin_revokes_and_the_link_stops_working(owner, admin_member, api_client_for):
    issued = invitation_create(actor=owner, email="c@example.test", role="viewer")
    assert api_client_for(admin_member).delete(f"{URL}{issued.invitation.pk}/").status_code == 204
    assert Invitation.objects.get().revoked_at is not None
    invitee = api_client_for(UserFactory(email="c@example.test"))
    _error(invitee.post("/api/v1/invitations/accept/", {"token": issued.token}, format="json"), 400, "invitation_used")
    assert not Membership.objects.filter(user__email="c@example.test").exists()


def test_accepting_with_another_address_is_refused(owner, api_client_for):
    issued = invitation_create(actor=owner, email="d@example.test", role="viewer")
    intruder = api_client_for(UserFactory(email="mallory@example.test"))
    before = snapshot_rows()
    response = intruder.post("/api/v1/invitations/accept/", {"token": issued.token}, format="json")
    _error(response, 403, "invitation_email_mismatch")
    assert snapshot_rows() == before


def test_a_mail_server_failure_keeps_the_invitation_and_says_so(owner, api_client_for, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", free_port(), 2
    response = _invite(api_client_for(owner))
    assert response.status_code == 201 and response.json()["email_sent"] is False
    assert invitation_by_token(token=response.json()["token"]) is not None
