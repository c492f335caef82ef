"""Which upstream failures may be retried on another offering, and what the caller sees."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import aiohttp

from routing.http.errors import GatewayError, UpstreamFailure, upstream_rate_limited
from routing.upstream.byok_connect import RefusedAddress, refused
from routing.upstream.http_client import PoolWaitTimeout

MAX_RETRY_AFTER_S = 300.0
DEFAULT_429_COOLDOWN_S = 5.0
POOL_RETRY_AFTER_S = 1.0  # slots free up as streams end: come back soon
RATE_LIMIT_KINDS = frozenset({"http_429", "limit_room"})  # the provider refused for rate, or its learned room is gone

log = logging.getLogger("routing.failover")


def retry_after(headers: Mapping[str, str]) -> float | None:
    raw = headers.get("retry-after") or headers.get("Retry-After")
    if not raw:
        return None
    try:
        return min(max(float(raw), 0.0), MAX_RETRY_AFTER_S)
    except ValueError:
        return None


def from_status(status: int, headers: Mapping[str, str], body: bytes) -> UpstreamFailure:
    snippet = body[:300].decode("utf-8", "replace")
    if status == 429:
        failure = UpstreamFailure(
            503, "http_429", "The provider is rate limiting; no other provider could serve the request.",
            retryable=True, retry_after=retry_after(headers) or DEFAULT_429_COOLDOWN_S,
        )  # fmt: skip
    elif status in (503, 529):
        failure = UpstreamFailure(
            503,
            "http_overloaded",
            f"The provider is overloaded ({status}).",
            retryable=True,
            retry_after=retry_after(headers),
        )
    elif status >= 500:
        failure = UpstreamFailure(502, "http_5xx", f"The provider failed with {status}.", retryable=True)
    elif status in (401, 403, 404, 408):
        failure = UpstreamFailure(502, "http_4xx", f"The provider refused our request ({status}).", retryable=True)
    else:
        failure = UpstreamFailure(status, "http_4xx", f"The provider rejected the request: {snippet}", retryable=False)
    failure.upstream_status = status
    failure.upstream_body = body
    return failure


def passed_over() -> UpstreamFailure:
    """Not sent: the offering's learned rate limit has no room left (routing.limits.board)."""
    return UpstreamFailure(503, "limit_room", "The provider's rate limit has no room left.", retryable=True)


def from_exception(exc: BaseException) -> UpstreamFailure:
    if isinstance(exc, TimeoutError):
        return UpstreamFailure(504, "timeout", "The provider did not answer in time.", retryable=True)
    if isinstance(exc, PoolWaitTimeout):  # our own per-host limit, not the provider's health
        return UpstreamFailure(
            503, "pool_wait", "Tokenway has too many requests in flight to this provider; retry shortly.",
            retryable=True, retry_after=POOL_RETRY_AFTER_S, code="gateway_busy",
        )  # fmt: skip
    # The caller reads a plain sentence; the library's text (hosts, ports, internals) goes to our log only.
    log.info("upstream failure: %s: %s", type(exc).__name__, exc)
    if isinstance(exc, aiohttp.ClientConnectorError) and isinstance(exc.os_error, RefusedAddress):
        return refused(exc.host, str(exc.os_error))
    if isinstance(exc, aiohttp.ClientConnectorError):
        return UpstreamFailure(502, "connect", "Could not connect to the provider.", retryable=True)
    return UpstreamFailure(502, "protocol", "The provider connection failed before the answer began.", retryable=True)


def rate_limited(failures: Sequence[UpstreamFailure]) -> GatewayError | None:
    """A 429 when every attempt met a rate limit: the caller's SDK backs off on a 429 (its
    ``RateLimitError``), never on a 503. Retry-After is the soonest any of them said it has room."""
    if not failures or any(f.kind not in RATE_LIMIT_KINDS for f in failures):
        return None
    waits = [f.retry_after for f in failures if f.retry_after is not None]
    return upstream_rate_limited(min(waits) if waits else None)
