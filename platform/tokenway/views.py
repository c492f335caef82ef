from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import cache_control

from tokenway.health import platform_health


def healthz(request: HttpRequest) -> JsonResponse:
    """Every check now. The web process answers /healthz before Django, from the background checks
    (tokenway.health_asgi); this view is what Django's test client and any other way of serving
    Django reach."""
    healthy, body = platform_health()
    return JsonResponse(body, status=200 if healthy else 503)


@cache_control(public=True, max_age=86400)
def favicon(request: HttpRequest) -> HttpResponse:
    """Browsers ask for /favicon.ico on pages that name no icon (Django admin): no icon, and no 404."""
    return HttpResponse(status=204)
