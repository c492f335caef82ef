"""Availability and error classes: how a failed request is classified, and which headers we keep.

Every probe kind feeds availability: a probe whose provider answered (any class but
timeout, connect, 5xx, truncated) counts as "up". The rate-limit headers of every
answer are recorded in ``details["rate_limit"]``.
"""

from __future__ import annotations

import asyncio

import aiohttp

from evaluation.models import ErrorClass

# Classes that mean "the offering was not serving" (availability); the rest are answers we did not like.
DOWN_CLASSES = frozenset({ErrorClass.TIMEOUT, ErrorClass.CONNECT, ErrorClass.SERVER_ERROR, ErrorClass.TRUNCATED})
_RATE_LIMIT_PREFIXES = ("x-ratelimit-", "anthropic-ratelimit-", "ratelimit-")
_MAX_ERROR_BODY = 300  # characters of an error body kept in details; enough to read the provider's message


class ProbeFailure(Exception):
    def __init__(
        self,
        error_class: str,
        message: str,
        *,
        http_status: int | None = None,
        rate_limit: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.error_class = error_class
        self.http_status = http_status
        self.rate_limit = rate_limit or {}


def classify_status(status: int) -> str:
    if status == 429:
        return ErrorClass.RATE_LIMITED
    if status >= 500:
        return ErrorClass.SERVER_ERROR
    return ErrorClass.CLIENT_ERROR


def classify_exception(exc: BaseException, *, streaming_started: bool) -> str:
    if isinstance(exc, asyncio.TimeoutError | aiohttp.ServerTimeoutError):
        return ErrorClass.TIMEOUT
    if isinstance(exc, aiohttp.ClientPayloadError) or (streaming_started and isinstance(exc, aiohttp.ClientError)):
        return ErrorClass.TRUNCATED
    return ErrorClass.CONNECT


def rate_limit_headers(headers: object) -> dict[str, str]:
    items = getattr(headers, "items", None)
    if items is None:
        return {}
    return {
        str(name).lower(): str(value)
        for name, value in items()
        if str(name).lower().startswith(_RATE_LIMIT_PREFIXES) or str(name).lower() == "retry-after"
    }


def error_excerpt(body: bytes) -> str:
    return body[: _MAX_ERROR_BODY * 4].decode("utf-8", "replace")[:_MAX_ERROR_BODY]
