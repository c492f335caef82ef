from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import cache_control

from tokenway.health import platform_health


def healthz(request: HttpRequest) -> JsonResponse:
    healthy, body = platform_health()
    return JsonResponse(body, status=200 if healthy else 503)


@cache_control(public=True, max_age=86400)
def favicon(request: HttpRequest) -> HttpResponse:
    """Browsers ask for /favicon.ico on pages that name no icon (Django admin): no icon, and no 404."""
    return HttpResponse(status=204)
