"""Members and invitations. Calls tenants.services / tenants.invitations."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from foundation.api_errors import ApiError
from frontend.forms import InviteForm
from frontend.views.console_base import apply_api_error, deny, render_console, tenant_page
from tenants.invitation_mail import SentInvitation, invitation_send, site_url
from tenants.invitations import invitation_revoke
from tenants.permissions import Action
from tenants.selectors import (
    Membership,
    Role,
    tenant_invitation_get,
    tenant_invitations,
    tenant_member_get,
    tenant_members,
)
from tenants.services import membership_change_role, membership_remove


@tenant_page
def team(request: HttpRequest, membership: Membership) -> HttpResponse:
    form = InviteForm(request.POST or None)
    invite_link = None
    if request.method == "POST":
        if denied := deny(request, membership, Action.INVITATION_MANAGE):
            return denied
        if form.is_valid():
            try:
                sent = invitation_send(actor=membership, base_url=site_url(request), **form.cleaned_data)
            except ApiError as exc:
                apply_api_error(form, _already_member_explained(exc, membership, form))
            else:
                _report_sent(request, sent)
                invite_link = sent.link
                form = InviteForm()
    return render_console(
        request, membership, "frontend/console/team.html", "team",
        members=tenant_members(membership=membership), invitations=tenant_invitations(membership=membership)[:50],
        form=form, invite_link=invite_link, roles=Role.choices, now=timezone.now(),
    )  # fmt: skip


def _already_member_explained(exc: ApiError, membership: Membership, form: InviteForm) -> ApiError:
    """Inviting a member again never changes their role: say so, with the role they keep and where to change it."""
    if exc.error_code != "already_member":
        return exc
    email = form.cleaned_data["email"].strip().lower()
    member = next((m for m in tenant_members(membership=membership) if m.user.email.lower() == email), None)
    if member is None:
        return exc
    message = _(
        "%(email)s is already a member with the role %(role)s; an invitation does not change it. "
        "Change the role in the member list above."
    ) % {"email": email, "role": member.get_role_display()}
    return ApiError(exc.error_code, message, param="email")


def _report_sent(request: HttpRequest, sent: SentInvitation) -> None:
    email = sent.issued.invitation.email
    if not sent.email_sent:
        messages.warning(
            request, _("The email to %(email)s could not be sent; copy the link below.") % {"email": email}
        )
    elif sent.issued.resent and sent.issued.previous_role not in ("", sent.issued.invitation.role):
        names = dict(Role.choices)
        messages.success(
            request,
            _(
                "Invitation sent again to %(email)s with the role %(role)s (was %(previous)s); the earlier link no longer works."
            )
            % {
                "email": email,
                "role": names[sent.issued.invitation.role],
                "previous": names[sent.issued.previous_role],
            },
        )
    elif sent.issued.resent:
        messages.success(
            request, _("Invitation sent again to %(email)s; the earlier link no longer works.") % {"email": email}
        )
    else:
        messages.success(request, _("Invitation emailed to %(email)s.") % {"email": email})


@require_POST
@tenant_page
def invitation_cancel(request: HttpRequest, membership: Membership, invitation_id: int) -> HttpResponse:
    if denied := deny(request, membership, Action.INVITATION_MANAGE):
        return denied
    invitation_revoke(invitation=tenant_invitation_get(membership=membership, invitation_id=invitation_id))
    messages.success(request, _("Invitation revoked; its link no longer works."))
    return redirect("frontend:team", slug=membership.tenant.slug)


@require_POST
@tenant_page
def member_update(request: HttpRequest, membership: Membership, member_id: int) -> HttpResponse:
    member = tenant_member_get(membership=membership, member_id=member_id)
    action = Action.MEMBER_REMOVE if request.POST.get("remove") else Action.MEMBER_CHANGE_ROLE
    if denied := deny(request, membership, action):
        return denied
    try:
        if action == Action.MEMBER_REMOVE:
            membership_remove(actor=membership, member=member)
            messages.success(request, _("Member removed."))
        else:
            membership_change_role(actor=membership, member=member, role=request.POST.get("role", ""))
            messages.success(request, _("Role updated."))
    except ApiError as exc:
        messages.error(request, str(exc.detail))
    return redirect("frontend:team", slug=membership.tenant.slug)
