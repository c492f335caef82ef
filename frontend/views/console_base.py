"""What every console page shares: login, membership lookup (foreign tenant -> 404), layout context."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from foundation.api_errors import ApiError
from tenants.permissions import Action, can
from tenants.selectors import Membership, membership_get, memberships_of

TenantView = Callable[..., HttpResponse]


def tenant_page(view: TenantView) -> Callable[..., HttpResponse]:
    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, slug: str, *args: Any, **kwargs: Any) -> HttpResponse:
        membership = membership_get(user=request.user, tenant_slug=slug)  # type: ignore[arg-type]
        return view(request, membership, *args, **kwargs)

    return wrapper


def permissions(role: str) -> dict[str, bool]:
    return {action.name.lower(): can(role, action) for action in Action}


def render_console(
    request: HttpRequest, membership: Membership, template: str, page: str, **context: Any
) -> HttpResponse:
    base = {
        "section": "console",
        "page": page,
        "membership": membership,
        "tenant": membership.tenant,
        "memberships": memberships_of(user=membership.user),
        "perm": permissions(membership.role),
    }
    return render(request, template, {**base, **context})


def apply_api_error(form: forms.Form, exc: ApiError) -> None:
    """Put a service's error on the field it names, else on the form."""
    field = exc.param if exc.param in form.fields else None
    form.add_error(field, str(exc.detail))


def deny(request: HttpRequest, membership: Membership, action: Action) -> HttpResponse | None:
    """A 403 page naming what the role lacks, or None when the member may do ``action``."""
    if can(membership.role, action):
        return None
    response = render_console(request, membership, "frontend/console/denied.html", "", action=action.value)
    response.status_code = 403
    return response
