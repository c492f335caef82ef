"""API keys: list, create (plaintext shown once), revoke, rotate. Calls apikeys.services."""

from __future__ import annotations

from datetime import timedelta

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from apikeys.selectors import ApiKey, tenant_key_get, tenant_keys
from apikeys.services import IssuedKey, api_key_issue, api_key_revoke, api_key_rotate
from foundation.api_errors import ApiError
from frontend.data.metering import limits_left
from frontend.forms import KeyForm, usd_to_micros
from frontend.views.console_base import apply_api_error, deny, render_console, tenant_page
from tenants.permissions import Action, can
from tenants.selectors import Membership

ROTATION_GRACE = timedelta(hours=24)  # long enough to deploy the new key everywhere


def _may_manage(membership: Membership, key: ApiKey) -> bool:
    if can(membership.role, Action.KEY_MANAGE_ANY):
        return True
    return can(membership.role, Action.KEY_MANAGE_OWN) and key.created_by_id == membership.user_id


def _page(request: HttpRequest, membership: Membership, form: KeyForm, issued: IssuedKey | None = None) -> HttpResponse:
    keys = list(tenant_keys(membership=membership))
    now = timezone.now()
    _, budgets = limits_left(tenant=membership.tenant, keys=keys)
    for key in keys:
        key.manageable = _may_manage(membership, key)  # type: ignore[attr-defined]
        key.budget = budgets.get(key.pk)  # type: ignore[attr-defined]
        key.expired = key.expires_at is not None and key.expires_at <= now  # type: ignore[attr-defined]
    return render_console(
        request, membership, "frontend/console/keys.html", "keys", keys=keys, form=form, issued=issued
    )


def _issue(request: HttpRequest, membership: Membership, form: KeyForm) -> IssuedKey | None:
    data = form.cleaned_data
    expires = int(data["expires_in"]) if data["expires_in"] else None
    try:
        return api_key_issue(
            tenant=membership.tenant,
            created_by=request.user,  # type: ignore[arg-type]
            name=data["name"],
            allowed_models=data["allowed_models"],
            usage_read=data["usage_read"] or None,
            rpm_limit=data["rpm_limit"],
            tpm_limit=data["tpm_limit"],
            max_concurrency=data["max_concurrency"],
            monthly_budget_micros=usd_to_micros(data["monthly_budget"]),
            expires_at=timezone.now() + timedelta(days=expires) if expires else None,
        )
    except ApiError as exc:
        apply_api_error(form, exc)
        return None


@tenant_page
def keys(request: HttpRequest, membership: Membership) -> HttpResponse:
    if denied := deny(request, membership, Action.KEY_LIST):
        return denied
    form = KeyForm(request.POST or None)
    issued = None
    if request.method == "POST":
        if denied := deny(request, membership, Action.KEY_CREATE):
            return denied
        if form.is_valid():
            issued = _issue(request, membership, form)
            if issued is not None:
                form = KeyForm()
    return _page(request, membership, form, issued)


@require_POST
@tenant_page
def key_revoke(request: HttpRequest, membership: Membership, key_id: int) -> HttpResponse:
    key = tenant_key_get(membership=membership, key_id=key_id)
    if not _may_manage(membership, key):
        return deny(request, membership, Action.KEY_MANAGE_ANY) or redirect(
            "frontend:keys", slug=membership.tenant.slug
        )
    api_key_revoke(key=key)
    messages.success(request, _("Key “%(name)s” revoked; the gateway refuses it within a second.") % {"name": key.name})
    return redirect("frontend:keys", slug=membership.tenant.slug)


@require_POST
@tenant_page
def key_rotate(request: HttpRequest, membership: Membership, key_id: int) -> HttpResponse:
    key = tenant_key_get(membership=membership, key_id=key_id)
    if not _may_manage(membership, key):
        return deny(request, membership, Action.KEY_MANAGE_ANY) or redirect(
            "frontend:keys", slug=membership.tenant.slug
        )
    try:
        issued = api_key_rotate(key=key, grace_until=timezone.now() + ROTATION_GRACE, rotated_by=request.user)  # type: ignore[arg-type]
    except ApiError as exc:
        messages.error(request, str(exc.detail))
        return redirect("frontend:keys", slug=membership.tenant.slug)
    messages.info(request, _("The old key keeps working for 24 hours; replace it before then."))
    return _page(request, membership, KeyForm(), issued)
