"""Invitations in the browser-facing pages: the console team page sends and revokes; the link's page
joins signed-in users, signs new users up, and explains every closed link, in English and Chinese."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.core import mail
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from tenants.invitations import invitation_accept, invitation_create, invitation_revoke, token_hash
from tenants.models import Invitation, Membership
from tests.factories import PASSWORD, UserFactory
from tests.platform.url_walk import snapshot_rows

pytestmark = pytest.mark.django_db
TEAM = "/console/acme/team/"
NEW_PASSWORD = "a-fresh-and-long-passphrase-7"


def _link_path(issued) -> str:
    return reverse("invitation", kwargs={"token": issued.token})


def _emailed_path() -> str:
    (link,) = re.findall(r"https?://\S+/accounts/invitations/[\w-]+/", str(mail.outbox[-1].body))
    return link.removeprefix("http://testserver")


# --- console: invite, re-send, revoke --------------------------------------------------------


def test_owner_invites_from_the_console_and_the_emailed_link_works(client, owner):
    client.force_login(owner.user)
    response = client.post(TEAM, {"email": "new@example.test", "role": "developer"})
    assert response.status_code == 200
    assert b"Invitation emailed to new@example.test" in response.content
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["new@example.test"]
    path = _emailed_path()
    assert path.encode() in response.content  # the same link is shown to copy
    client.logout()
    page = client.get(path)
    assert page.status_code == 200 and b'value="new@example.test"' in page.content


def test_console_reinvite_resends_without_a_duplicate(client, owner):
    client.force_login(owner.user)
    client.post(TEAM, {"email": "new@example.test", "role": "viewer"})
    first_link = _emailed_path()
    response = client.post(TEAM, {"email": "new@example.test", "role": "viewer"})
    assert b"Invitation sent again to new@example.test" in response.content
    assert Invitation.objects.count() == 1 and len(mail.outbox) == 2
    client.logout()
    old = client.get(first_link)
    assert old.status_code == 404 and b"only the link in the newest email works" in old.content
    assert client.get(_emailed_path()).status_code == 200


def test_pending_rows_offer_send_again_and_expired_ones_say_so(client, owner):
    issued = invitation_create(actor=owner, email="late@example.test", role="viewer")
    Invitation.objects.update(expires_at=timezone.now() - timedelta(minutes=1))
    client.force_login(owner.user)
    page = client.get(TEAM).content.decode()
    assert 'data-resend="late@example.test"' in page and "expired" in page
    response = client.post(TEAM, {"email": "late@example.test", "role": "viewer"})  # what the button posts
    assert b"Invitation sent again to late@example.test" in response.content
    refreshed = Invitation.objects.get()
    assert refreshed.pk == issued.invitation.pk and refreshed.expires_at > timezone.now()


def test_console_refuses_to_invite_a_member(client, owner, developer):
    client.force_login(owner.user)
    before = snapshot_rows()
    response = client.post(TEAM, {"email": developer.user.email, "role": "viewer"})
    assert response.status_code == 200 and b"is already a member" in response.content
    assert snapshot_rows() == before and mail.outbox == []


@pytest.mark.parametrize(("persona", "status"), [("developer", 403), ("viewer", 403), ("outsider", 404)])
def test_console_invite_and_revoke_are_refused_without_the_right(client, owner, persona, status, request):
    issued = invitation_create(actor=owner, email="keep@example.test", role="viewer")
    client.force_login(request.getfixturevalue(persona).user)
    before = snapshot_rows()
    assert client.post(TEAM, {"email": "x@example.test", "role": "owner"}).status_code == status
    revoke = reverse("frontend:invitation-revoke", args=["acme", issued.invitation.pk])
    assert client.post(revoke).status_code == status
    assert snapshot_rows() == before and mail.outbox == []


def test_admin_revokes_from_the_console(client, owner, admin_member):
    issued = invitation_create(actor=owner, email="gone@example.test", role="viewer")
    client.force_login(admin_member.user)
    response = client.post(reverse("frontend:invitation-revoke", args=["acme", issued.invitation.pk]))
    assert response.status_code == 302
    assert Invitation.objects.get().revoked_at is not None
    client.logout()
    assert client.get(_link_path(issued)).status_code == 410


# --- the acceptance page ---------------------------------------------------------------------


def test_signed_in_invitee_confirms_and_joins_with_the_invited_role(client, owner):
    invitee = UserFactory(email="ann@example.test")
    issued = invitation_create(actor=owner, email="ann@example.test", role="admin")
    client.force_login(invitee)
    page = client.get(_link_path(issued))
    assert page.status_code == 200 and b'data-state="confirm"' in page.content
    response = client.post(_link_path(issued))
    assert response.status_code == 302 and response["Location"] == "/console/acme/"
    assert Membership.objects.get(user=invitee).role == "admin"
    assert b"You joined as Admin" in client.get(response["Location"]).content


def test_signed_in_with_another_address_gets_a_clear_message(client, owner, outsider):
    issued = invitation_create(actor=owner, email="ann@example.test", role="admin")
    client.force_login(outsider.user)
    before = snapshot_rows()
    response = client.get(_link_path(issued))
    assert response.status_code == 403
    assert b"This invitation is for ann@example.test" in response.content
    assert client.post(_link_path(issued)).status_code == 403
    assert snapshot_rows() == before


def test_new_user_signs_up_with_the_invited_address_and_joins(client, owner):
    issued = invitation_create(actor=owner, email="newbie@example.test", role="developer")
    page = client.get(_link_path(issued))
    assert b'data-state="signup"' in page.content and b'value="newbie@example.test"' in page.content
    form = {"email": "attacker@example.test", "name": "Newbie", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD}
    response = client.post(_link_path(issued), form)
    assert response.status_code == 302 and response["Location"] == "/console/acme/"
    user = User.objects.get(email="newbie@example.test")  # the posted address is ignored
    assert not User.objects.filter(email="attacker@example.test").exists()
    assert Membership.objects.get(user=user).role == "developer"
    assert client.get("/console/acme/").status_code == 200  # signed in


def test_sign_up_errors_keep_the_page_and_write_nothing(client, owner):
    issued = invitation_create(actor=owner, email="newbie@example.test", role="developer")
    before = snapshot_rows()
    response = client.post(_link_path(issued), {"password1": NEW_PASSWORD, "password2": "different-one-9"})
    assert response.status_code == 200 and b"errorlist" in response.content
    assert snapshot_rows() == before


def test_existing_account_signs_in_with_its_password_and_joins(client, owner):
    user = UserFactory(email="known@example.test")
    issued = invitation_create(actor=owner, email="known@example.test", role="viewer")
    page = client.get(_link_path(issued))
    assert b'data-state="signin"' in page.content
    wrong = client.post(_link_path(issued), {"password": "not-the-password"})
    assert wrong.status_code == 200 and b"Wrong password" in wrong.content
    assert not Membership.objects.filter(user=user).exists()
    response = client.post(_link_path(issued), {"password": PASSWORD})
    assert response.status_code == 302 and Membership.objects.get(user=user).role == "viewer"


def test_member_already_gets_a_link_to_the_console(client, owner, developer):
    # An invitation made before they joined some other way (the service refuses to invite a member).
    Invitation.objects.create(
        tenant=owner.tenant,
        email=developer.user.email,
        role="viewer",
        token_hash=token_hash("tok-member"),
        expires_at=timezone.now() + timedelta(days=1),
    )
    client.force_login(developer.user)
    before = snapshot_rows()
    for response in (client.get("/accounts/invitations/tok-member/"), client.post("/accounts/invitations/tok-member/")):
        assert response.status_code == 200 and b'data-state="member"' in response.content
    assert snapshot_rows() == before


def _closed(owner, state):
    issued = invitation_create(actor=owner, email="late@example.test", role="viewer")
    if state == "expired":
        Invitation.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    elif state == "revoked":
        invitation_revoke(invitation=issued.invitation)
    elif state == "accepted":
        invitation_accept(token=issued.token, user=UserFactory(email="late@example.test"))
    return _link_path(issued)


@pytest.mark.parametrize(
    ("state", "status", "heading"),
    [
        ("expired", 410, b"This invitation has expired"),
        ("revoked", 410, b"This invitation was withdrawn"),
        ("accepted", 410, b"This invitation has already been used"),
    ],
)
@pytest.mark.parametrize("signed_in", [False, True])
def test_closed_links_get_their_own_page_and_change_nothing(client, owner, state, status, heading, signed_in):
    path = _closed(owner, state)
    if signed_in:
        client.force_login(owner.user)
    before = snapshot_rows()
    for response in (client.get(path), client.post(path, {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD})):
        assert response.status_code == status and heading in response.content
        assert f'data-state="{state}"'.encode() in response.content
    assert snapshot_rows() == before


def test_unknown_token_is_a_404_page_not_a_trace(client, db):
    response = client.get(reverse("invitation", kwargs={"token": "not-a-real-token"}))
    assert response.status_code == 404 and b"This invitation link is not valid" in response.content
    assert b'class="topbar"' in response.content  # the site's own layout


def test_acceptance_page_in_chinese(client, owner):
    issued = invitation_create(actor=owner, email="li@example.test", role="viewer")
    response = client.get(_link_path(issued), HTTP_ACCEPT_LANGUAGE="zh-hans")
    text = response.content.decode()
    assert response.status_code == 200 and 'lang="zh-hans"' in text
    assert "在 Tokenway 上加入 Acme" in text and "创建账户并加入" in text
    expired = client.get(_closed(owner, "expired"), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "此邀请已过期" in expired and "邀请的有效期为 7 天。" in expired


def test_invitation_email_in_the_inviters_language(client, owner):
    client.force_login(owner.user)
    client.post(TEAM, {"email": "li@example.test", "role": "viewer"}, HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "邀请您加入" in mail.outbox[0].subject and "打开此链接接受邀请" in mail.outbox[0].body
