"""Routing preferences and BYOK provider credentials."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from catalog.selectors import provider_choices, provider_get
from credentials.selectors import tenant_credential_get, tenant_credentials
from credentials.services import credential_create, credential_delete
from foundation.api_errors import ApiError
from frontend.forms import CredentialForm, RoutingForm
from frontend.views.console_base import apply_api_error, deny, render_console, tenant_page
from tenants.permissions import Action
from tenants.selectors import Membership
from tenants.services import tenant_update


@tenant_page
def routing_prefs(request: HttpRequest, membership: Membership) -> HttpResponse:
    tenant = membership.tenant
    initial = {
        "default_route_mode": tenant.default_route_mode,
        "allowed_providers": tenant.allowed_providers,
        "blocked_providers": tenant.blocked_providers,
    }
    form = RoutingForm(request.POST or None, initial=initial, providers=provider_choices())
    if request.method == "POST":
        if denied := deny(request, membership, Action.TENANT_UPDATE):
            return denied
        if form.is_valid():
            tenant_update(tenant=tenant, **form.cleaned_data)
            messages.success(request, _("Routing preferences saved; the gateway applies them within a second."))
            return redirect("frontend:routing", slug=tenant.slug)
    return render_console(request, membership, "frontend/console/routing.html", "routing", form=form)


@tenant_page
def credentials(request: HttpRequest, membership: Membership) -> HttpResponse:
    if denied := deny(request, membership, Action.CREDENTIAL_LIST):
        return denied
    form = CredentialForm(request.POST or None, providers=provider_choices())
    if request.method == "POST":
        if denied := deny(request, membership, Action.CREDENTIAL_MANAGE):
            return denied
        if form.is_valid():
            provider = provider_get(slug=form.cleaned_data["provider"])
            try:
                credential_create(
                    tenant=membership.tenant,
                    provider=provider,
                    secret=form.cleaned_data["secret"],
                    base_url=form.cleaned_data["base_url"],
                )
            except ApiError as exc:
                apply_api_error(form, exc)
            else:
                messages.success(
                    request, _("Credential saved. Requests to %(p)s now use your own key.") % {"p": provider.name}
                )
                return redirect("frontend:credentials", slug=membership.tenant.slug)
    items = tenant_credentials(membership=membership)
    return render_console(
        request, membership, "frontend/console/credentials.html", "credentials", form=form, items=items
    )


@require_POST
@tenant_page
def credential_remove(request: HttpRequest, membership: Membership, credential_id: int) -> HttpResponse:
    if denied := deny(request, membership, Action.CREDENTIAL_MANAGE):
        return denied
    credential_delete(credential=tenant_credential_get(membership=membership, credential_id=credential_id))
    messages.success(request, _("Credential deleted; requests use Tokenway’s provider account again."))
    return redirect("frontend:credentials", slug=membership.tenant.slug)
