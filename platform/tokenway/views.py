from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from tokenway.health import platform_health


def healthz(request: HttpRequest) -> JsonResponse:
    healthy, body = platform_health()
    return JsonResponse(body, status=200 if healthy else 503)
