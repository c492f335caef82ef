"""Playground: the browser streams a chat straight from the gateway (/v1/chat/completions) with a key."""

from __future__ import annotations

from datetime import timedelta

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.http import require_POST

from apikeys.services import api_key_issue
from catalog.selectors import model_choices
from foundation.api_errors import ApiError
from frontend.views.console_base import render_console, tenant_page
from tenants.permissions import Action, can
from tenants.selectors import Membership, RouteMode

PLAYGROUND_KEY_TTL = timedelta(days=1)  # a throw-away key: enough for a session of experiments


@tenant_page
def playground(request: HttpRequest, membership: Membership) -> HttpResponse:
    return render_console(
        request, membership, "frontend/console/playground.html", "playground",
        models=model_choices(), route_modes=RouteMode.choices,
    )  # fmt: skip


@require_POST
@tenant_page
def playground_key(request: HttpRequest, membership: Membership) -> JsonResponse:
    if not can(membership.role, Action.KEY_CREATE):
        return JsonResponse(
            {"error": {"code": "permission_denied", "message": "your role may not create keys"}}, status=403
        )
    try:
        issued = api_key_issue(
            tenant=membership.tenant, created_by=request.user, name="Playground",  # type: ignore[arg-type]
            expires_at=timezone.now() + PLAYGROUND_KEY_TTL, usage_read=False,
        )  # fmt: skip
    except ApiError as exc:
        return JsonResponse({"error": {"code": exc.error_code, "message": str(exc.detail)}}, status=exc.status_code)
    return JsonResponse(
        {
            "key": issued.plaintext,
            "expires_at": issued.api_key.expires_at.isoformat() if issued.api_key.expires_at else None,
        }
    )
