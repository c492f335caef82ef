"""Sending an invitation: the acceptance link (absolute) by email, through Django's email framework.

The site's address comes from ``TOKENWAY_SITE_URL`` when set (behind a proxy, or from a worker),
else from the request that sent the invitation.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.conf import settings
from django.core.mail import send_mail
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import reverse

from tenants.invitations import INVITATION_TTL, IssuedInvitation, invitation_create
from tenants.models import Membership

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SentInvitation:
    issued: IssuedInvitation
    link: str
    email_sent: bool  # False when the mail server refused or was unreachable; the link still works


def site_url(request: HttpRequest | None) -> str:
    configured = str(getattr(settings, "TOKENWAY_SITE_URL", "") or "")
    if configured or request is None:
        return configured.rstrip("/")
    return request.build_absolute_uri("/").rstrip("/")


def invitation_link(*, token: str, base_url: str) -> str:
    return base_url + reverse("invitation", kwargs={"token": token})


def invitation_email_send(*, issued: IssuedInvitation, link: str) -> None:
    """One email in the sender's current language; SMTP failures (OSError) reach the caller."""
    invitation = issued.invitation
    context = {
        "tenant": invitation.tenant,
        "inviter": invitation.invited_by,
        "role": invitation.get_role_display(),
        "link": link,
        "days": INVITATION_TTL.days,
        "expires_at": invitation.expires_at,
    }
    subject = render_to_string("tenants/email/invitation_subject.txt", context).strip()
    body = render_to_string("tenants/email/invitation_body.txt", context)
    send_mail(subject, body, None, [invitation.email])


def invitation_send(*, actor: Membership, email: str, role: str, base_url: str) -> SentInvitation:
    """Invite (or re-invite) and email the link. A mail failure is logged and reported, not raised:
    the invitation stands and the inviter can copy the link or re-send."""
    issued = invitation_create(actor=actor, email=email, role=role)
    link = invitation_link(token=issued.token, base_url=base_url)
    try:
        invitation_email_send(issued=issued, link=link)
    except OSError:  # smtplib.SMTPException and connection errors are OSErrors
        log.exception("invitation email to %s failed", issued.invitation.email)
        return SentInvitation(issued=issued, link=link, email_sent=False)
    return SentInvitation(issued=issued, link=link, email_sent=True)
