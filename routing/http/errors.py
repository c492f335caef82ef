"""Gateway errors: one exception type carrying status, stable code and message.

Rendering into the caller's dialect lives in routing/wire/.
"""

from __future__ import annotations

from collections.abc import Sequence


class GatewayError(Exception):
    """A refusal or failure the caller sees; ``code`` is stable, ``message`` human."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        param: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.param = param
        self.retry_after = retry_after


def invalid_request(message: str, *, param: str | None = None) -> GatewayError:
    return GatewayError(400, "invalid_request", message, param=param)


def invalid_key() -> GatewayError:
    return GatewayError(401, "invalid_api_key", "Invalid or missing API key.")


def forbidden(message: str) -> GatewayError:
    return GatewayError(403, "forbidden_scope", message)


def unknown_model(model: str, suggestions: Sequence[str] = (), *, family: str | None = None) -> GatewayError:
    hint = f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""
    message = f"The model {model!r} does not exist or is not available.{hint} GET /v1/models lists every name."
    if family is not None:  # an unknown version of a known family: never another version in its place unasked
        message += (
            f" Tokenway serves no other version in its place (the newest of its family is {family!r})"
            " unless model family fallback is turned on for the API key or the organisation."
        )
    return GatewayError(404, "model_not_found", message, param="model")


STORE_RETRY_AFTER_S = 1.0  # Redis restarts or fails over in seconds; clients come back soon


def store_unavailable() -> GatewayError:
    """Redis (keys, limits, balances) is unreachable: money fails closed, never a 500."""
    return GatewayError(
        503, "service_unavailable", "Tokenway cannot check limits and balance right now; retry shortly.",
        retry_after=STORE_RETRY_AFTER_S,
    )  # fmt: skip


RATE_LIMITED_RETRY_AFTER_S = 1.0  # no provider said when: rate windows slide, a second is the shortest honest wait


def upstream_rate_limited(retry_after_s: float | None) -> GatewayError:
    """Every provider that could serve the call is rate limiting: a 429 (the SDKs' ``RateLimitError``
    backs off and retries), not a 503, with the soonest time one of them has room again."""
    return GatewayError(
        429, "upstream_rate_limited",
        "Every provider that can serve this request is rate limiting it right now; retry after Retry-After seconds.",
        retry_after=max(retry_after_s or 0.0, RATE_LIMITED_RETRY_AFTER_S),
    )  # fmt: skip


def usage_unrecordable() -> GatewayError:
    """Neither Redis nor the local spool can take a usage event: a call answered now could not be billed,
    so paid work waits (routing.handoff.spool). Redis or the disk is back within seconds, or an operator is paged."""
    return GatewayError(
        503, "service_unavailable", "Tokenway cannot record usage right now; retry shortly.",
        retry_after=STORE_RETRY_AFTER_S,
    )  # fmt: skip


def body_too_large(limit: int) -> GatewayError:
    return GatewayError(413, "request_too_large", f"Request body exceeds {limit} bytes.")


class UpstreamFailure(Exception):
    """One attempt at one offering failed; ``retryable`` says if another offering may be tried."""

    def __init__(
        self, status: int, kind: str, message: str, *, retryable: bool, retry_after: float | None = None,
        code: str | None = None,
    ) -> None:  # fmt: skip
        super().__init__(message)
        self.code = code  # the caller's error code when it is more precise than the status's
        self.status = status  # the status we would show the caller: 502, 503 or 504
        self.kind = kind  # "connect" | "timeout" | "http_429" | "http_5xx" | "http_4xx" | "protocol" | "pool_wait"
        # | "limit_room" (not sent: the learned rate limit is spent)
        self.message = message
        self.retryable = retryable
        self.retry_after = retry_after
        self.upstream_status: int | None = None
        self.upstream_body: bytes = b""

    def to_gateway_error(self) -> GatewayError:
        code = self.code or {502: "upstream_error", 503: "upstream_unavailable", 504: "upstream_timeout"}.get(
            self.status, "upstream_error"
        )
        return GatewayError(self.status, code, self.message, retry_after=self.retry_after)
