"""OpenAPI description of API-key authentication (drf-spectacular extension, registered on import)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "apikeys.authentication.ApiKeyAuthentication"
    name = "apiKeyAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A Tokenway API key (`tw_live_...` / `tw_test_...`); `x-api-key` is accepted too.",
        }
