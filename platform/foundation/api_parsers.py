"""Request body parsing for the management API: JSON only, size-limited (413 ``payload_too_large``).

Kept apart from api_errors because DRF resolves DEFAULT_PARSER_CLASSES while importing rest_framework.views.
"""

from __future__ import annotations

import io
from typing import Any

from django.conf import settings
from rest_framework import exceptions, status
from rest_framework.parsers import JSONParser

from contracts.tokens import MAX_NESTING, TooDeeplyNested, count_value_tokens


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "request body too large"
    default_code = "payload_too_large"


class LimitedJSONParser(JSONParser):
    """JSON parser that enforces DATA_UPLOAD_MAX_MEMORY_SIZE (DRF streams the body past Django's check)."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        request = (parser_context or {}).get("request")
        declared = request.META.get("CONTENT_LENGTH") if request is not None else None
        if limit is not None and declared and str(declared).isdigit() and int(declared) > limit:
            raise PayloadTooLarge()
        raw = stream.read(limit + 1) if limit is not None else stream.read()
        if limit is not None and len(raw) > limit:
            raise PayloadTooLarge()
        try:
            data = super().parse(io.BytesIO(raw), media_type, parser_context)
            count_value_tokens(data)  # walks the value without recursion; refuses hostile nesting
        except (RecursionError, TooDeeplyNested) as exc:
            raise exceptions.ParseError(f"JSON parse error - nested deeper than {MAX_NESTING} levels") from exc
        return data
