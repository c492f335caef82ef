"""The page an invitation link opens (``/accounts/invitations/<token>/``, routed by tokenway.urls beside the
account pages: the page is the tenant's, the accounts app knows nothing of tenants).

Signed in with the invited address -> a button joins; signed in as someone else -> says so;
signed out -> sign-up with the address filled in, or sign-in when that account exists. Unknown,
expired, revoked and used links each get their own page (404 / 410), never an error trace.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth import login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from accounts.invitation_forms import InvitationLoginForm, InvitationSignupForm
from accounts.selectors import user_exists
from foundation.api_errors import ApiError
from tenants.invitations import INVITATION_TTL, invitation_accept, invitation_state, user_signup_by_invitation
from tenants.models import Invitation, Membership
from tenants.selectors import invitation_by_token, memberships_of

CLOSED_STATUS = {"unknown": 404, "expired": 410, "revoked": 410, "accepted": 410}
BACKEND = "django.contrib.auth.backends.ModelBackend"


def _page(
    request: HttpRequest, mode: str, invitation: Invitation | None, status: int = 200, **extra: Any
) -> HttpResponse:
    context = {"mode": mode, "invitation": invitation, "days": INVITATION_TTL.days, **extra}
    return render(request, "accounts/invitation.html", context, status=status)


def _joined(request: HttpRequest, membership: Membership) -> HttpResponse:
    messages.success(
        request,
        _("Welcome to %(tenant)s. You joined as %(role)s.")
        % {"tenant": membership.tenant.name, "role": membership.get_role_display()},
    )
    return redirect(reverse("frontend:overview", args=[membership.tenant.slug]))


@require_http_methods(["GET", "POST"])
def invitation_page(request: HttpRequest, token: str) -> HttpResponse:
    invitation = invitation_by_token(token=token)
    state = invitation_state(invitation)
    if invitation is None or state != "pending":
        return _page(request, state, invitation, status=CLOSED_STATUS[state])
    try:
        if request.user.is_authenticated:
            return _signed_in(request, invitation, token)
        if user_exists(email=invitation.email):
            return _sign_in(request, invitation, token)
        return _sign_up(request, invitation, token)
    except ApiError:  # lost a race (revoked, used or expired since the page opened): show its state
        return redirect(request.path)


def _signed_in(request: HttpRequest, invitation: Invitation, token: str) -> HttpResponse:
    user = request.user
    if user.email.lower() != invitation.email:  # type: ignore[union-attr]
        return _page(request, "mismatch", invitation, status=403)
    if memberships_of(user=user).filter(tenant_id=invitation.tenant_id).exists():  # type: ignore[arg-type]
        return _page(request, "member", invitation)
    if request.method == "POST":
        return _joined(request, invitation_accept(token=token, user=user))  # type: ignore[arg-type]
    return _page(request, "confirm", invitation)


def _sign_in(request: HttpRequest, invitation: Invitation, token: str) -> HttpResponse:
    form = InvitationLoginForm(request.POST or None, request=request, email=invitation.email)
    if request.method == "POST" and form.is_valid() and form.user is not None:
        membership = invitation_accept(token=token, user=form.user)
        login(request, form.user, backend=BACKEND)
        return _joined(request, membership)
    return _page(request, "signin", invitation, form=form)


def _sign_up(request: HttpRequest, invitation: Invitation, token: str) -> HttpResponse:
    form = InvitationSignupForm(request.POST or None, email=invitation.email)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        membership = user_signup_by_invitation(
            token=token, email=invitation.email, name=data.get("name", ""), password=data["password1"]
        )
        login(request, membership.user, backend=BACKEND)
        return _joined(request, membership)
    return _page(request, "signup", invitation, form=form)
