"""Every management API error renders as {"error": {"code", "message", "param"}}."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from foundation.api_parsers import PayloadTooLarge

_CODES = {
    exceptions.ParseError: "invalid_json",
    exceptions.AuthenticationFailed: "authentication_failed",
    exceptions.NotAuthenticated: "not_authenticated",
    exceptions.PermissionDenied: "permission_denied",
    exceptions.NotFound: "not_found",
    exceptions.MethodNotAllowed: "method_not_allowed",
    exceptions.NotAcceptable: "not_acceptable",
    exceptions.UnsupportedMediaType: "unsupported_media_type",
    exceptions.Throttled: "rate_limited",
}


class ApiError(exceptions.APIException):
    """A domain error with a stable machine code, raised by services and views."""

    def __init__(self, code: str, message: str, *, param: str | None = None, status_code: int = 400) -> None:
        super().__init__(detail=message, code=code)
        self.status_code = status_code
        self.error_code = code
        self.param = param


def _first_validation_error(detail: Any, prefix: str = "") -> tuple[str | None, str, str]:
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = key if key != "non_field_errors" else ""
            path = f"{prefix}.{name}" if prefix and name else (name or prefix)
            return _first_validation_error(value, path)
    if isinstance(detail, list) and detail:
        return _first_validation_error(detail[0], prefix)
    code = getattr(detail, "code", "invalid") or "invalid"
    return (prefix or None), str(detail), str(code)


def error_body(code: str, message: str, param: str | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "param": param}}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, RequestDataTooBig):
        exc = PayloadTooLarge()
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, ApiError):
        response.data = error_body(exc.error_code, str(exc.detail), exc.param)
    elif isinstance(exc, exceptions.ValidationError):
        param, message, code = _first_validation_error(exc.detail)
        if not (code.startswith("invalid") or code in PASS_THROUGH_CODES):
            code = f"invalid_{code}"
        response.data = error_body(code, message, param)
        response.status_code = status.HTTP_400_BAD_REQUEST
    else:
        code = _CODES.get(type(exc), getattr(exc, "default_code", "error"))
        response.data = error_body(str(code), str(getattr(exc, "detail", exc)))
    return response


# --- Request guards and Django-level handlers -----------------------------------------------

# Codes raised by our own validation that are already stable names (not prefixed with "invalid_").
PASS_THROUGH_CODES = frozenset({"unknown_field", "slug_taken"})


def _wants_json(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def handler400(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _wants_json(request):
        return JsonResponse(error_body("bad_request", "bad request"), status=400)
    return defaults.bad_request(request, exception)  # type: ignore[arg-type]


def handler404(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _wants_json(request):
        return JsonResponse(error_body("not_found", "not found"), status=404)
    return defaults.page_not_found(request, exception)


def handler500(request: HttpRequest) -> HttpResponse:
    if _wants_json(request):
        return JsonResponse(error_body("server_error", "internal error; it has been logged"), status=500)
    return defaults.server_error(request)
