from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import cache_control

from tokenway.health import platform_health, summary
from tokenway.health_background import CHECKS


def healthz(request: HttpRequest) -> JsonResponse:
    """Served by tokenway.health_asgi in the web process; this view answers where Django is reached
    otherwise (the test client, another server): the background readings, or every check now without them."""
    healthy, body = summary(CHECKS.statuses()) if CHECKS.running else platform_health()
    return JsonResponse(body, status=200 if healthy else 503)


@cache_control(public=True, max_age=86400)
def favicon(request: HttpRequest) -> HttpResponse:
    """Browsers ask for /favicon.ico on pages that name no icon (Django admin): no icon, and no 404."""
    return HttpResponse(status=204)
