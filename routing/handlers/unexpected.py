"""The last answer on ``/v1/*``: an exception no handler expected (a bug) becomes the caller's 500 in its
own error shape, with the call's request id, logged with its stack and counted
(``tokenway_gateway_unexpected_errors_total``); the caller reads no stack, path or secret."""

from __future__ import annotations

import logging

from contracts.jsonlog import REQUEST_ID
from routing.handlers.intake import new_request_id, send_error
from routing.http.asgi_io import Scope, StatusSeen
from routing.http.errors import GatewayError
from routing.telemetry import metrics
from routing.wire.dialects import ANTHROPIC, OPENAI, Dialect

log = logging.getLogger("routing.unexpected")


def internal_error(request_id: str) -> GatewayError:
    message = f"The gateway failed to handle this request (request id {request_id}); it has been logged."
    return GatewayError(500, "internal_error", message)


def dialect_of(path: str) -> Dialect:
    """The caller's error shape by path alone (the Responses API answers errors in the OpenAI shape)."""
    return ANTHROPIC if path.startswith("/v1/messages") else OPENAI


def noted(method: str, path: str, request_id: str) -> GatewayError:
    """Log (with the stack) and count the exception being handled; the error the caller is shown."""
    metrics.observe_unexpected(path)
    log.exception("unexpected error on %s %s (request %s)", method, path, request_id)
    return internal_error(request_id)


async def answer(scope: Scope, send: StatusSeen) -> bool:
    """The 500 for the exception being handled, unless the response has started: then False, and the
    caller re-raises (only the server can still end that connection)."""
    path: str = scope.get("path", "")
    request_id = REQUEST_ID.get() or new_request_id()  # set by the handler if it got that far
    err = noted(scope.get("method", ""), path, request_id)
    if send.status:
        return False
    await send_error(send, dialect_of(path), err, request_id)
    return True
