"""DRF authentication with a Tokenway API key (``Authorization: Bearer tw_...`` or ``x-api-key``).

For endpoints the key itself may call (``/api/v1/key``, ``/api/v1/generation``).
``request.user`` is an :class:`ApiKeyPrincipal`; ``request.auth`` is the ApiKey.
"""

from __future__ import annotations

from django.conf import settings
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request

from apikeys.models import ApiKey
from apikeys.selectors import usable_key_for_plaintext
from contracts.apikey_format import PREFIXES


class ApiKeyPrincipal:
    """Stands in for a user when a request is made with an API key."""

    is_authenticated = True
    is_anonymous = False
    is_active = True
    is_staff = False
    pk = None

    def __init__(self, api_key: ApiKey) -> None:
        self.api_key = api_key
        self.tenant = api_key.tenant

    def __repr__(self) -> str:
        return f"ApiKeyPrincipal(key_id={self.api_key.pk})"


def presented_key(request: Request) -> str | None:
    header = str(request.META.get("HTTP_AUTHORIZATION", ""))
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip().startswith(PREFIXES):
        return value.strip()
    x_api_key = str(request.META.get("HTTP_X_API_KEY", "")).strip()
    return x_api_key or None


class ApiKeyAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[ApiKeyPrincipal, ApiKey] | None:
        plaintext = presented_key(request)
        if plaintext is None:
            return None
        api_key = usable_key_for_plaintext(plaintext, pepper=settings.API_KEY_PEPPER)
        if api_key is None:
            # Never echo the presented key back.
            raise exceptions.AuthenticationFailed("invalid, revoked or expired API key", code="invalid_api_key")
        return ApiKeyPrincipal(api_key), api_key

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="tokenway"'
