"""Each provider's own error body for a SimError: one small function per style."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from sim import errors as e
from sim.errors import SimError

Body = Any
_BAD_GATEWAY_HTML = (
    b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    b"<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
)

_OPENAI_TYPES = {
    e.INVALID: ("invalid_request_error", None),
    e.AUTH: ("invalid_request_error", "invalid_api_key"),
    e.NOT_FOUND: ("invalid_request_error", "model_not_found"),
    e.CONTEXT: ("invalid_request_error", "context_length_exceeded"),
    e.RATE_LIMIT: ("requests", "rate_limit_exceeded"),
    e.SERVER: ("server_error", None),
    e.UNAVAILABLE: ("server_error", "service_unavailable"),
    e.OVERLOADED: ("server_error", "overloaded"),
}


def openai(err: SimError, request_id: str) -> Body:
    kind, code = _OPENAI_TYPES[err.kind]
    return {"error": {"message": err.message, "type": kind, "param": err.param, "code": err.code or code}}


_DEEPSEEK_TYPES = {
    e.AUTH: "authentication_error",
    e.RATE_LIMIT: "rate_limit_error",
    e.SERVER: "server_error",
    e.UNAVAILABLE: "server_overloaded",
    e.OVERLOADED: "server_overloaded",
}


def deepseek(err: SimError, request_id: str) -> Body:
    kind = _DEEPSEEK_TYPES.get(err.kind, "invalid_request_error")
    return {"error": {"message": err.message, "type": kind, "param": err.param, "code": err.code or kind}}


_MOONSHOT_TYPES = {
    e.AUTH: "invalid_authentication_error",
    e.NOT_FOUND: "resource_not_found_error",
    e.RATE_LIMIT: "rate_limit_reached_error",
    e.SERVER: "server_error",
    e.UNAVAILABLE: "engine_overloaded_error",
    e.OVERLOADED: "engine_overloaded_error",
}


def moonshot(err: SimError, request_id: str) -> Body:
    return {"error": {"message": err.message, "type": _MOONSHOT_TYPES.get(err.kind, "invalid_request_error")}}


_ZHIPU_CODES = {
    e.INVALID: "1214",
    e.AUTH: "1001",
    e.NOT_FOUND: "1211",
    e.CONTEXT: "1261",
    e.RATE_LIMIT: "1302",
    e.SERVER: "500",
    e.UNAVAILABLE: "1305",
    e.OVERLOADED: "1305",
}


def zhipu(err: SimError, request_id: str) -> Body:
    return {"error": {"code": _ZHIPU_CODES[err.kind], "message": err.message}}


_QWEN_CODES = {
    e.INVALID: "invalid_parameter_error",
    e.AUTH: "invalid_api_key",
    e.NOT_FOUND: "model_not_found",
    e.CONTEXT: "invalid_parameter_error",
    e.RATE_LIMIT: "limit_requests",
    e.SERVER: "internal_error",
    e.UNAVAILABLE: "ServiceUnavailable",
    e.OVERLOADED: "ServiceUnavailable",
}


def qwen(err: SimError, request_id: str) -> Body:
    kind = "requests" if err.kind == e.RATE_LIMIT else "invalid_request_error"
    error = {"code": _QWEN_CODES[err.kind], "param": err.param, "message": err.message, "type": kind}
    return {"error": error, "id": f"chatcmpl-{request_id}", "request_id": request_id}


_ARK = {
    e.INVALID: ("InvalidParameter", "BadRequest"),
    e.AUTH: ("AuthenticationError", "Unauthorized"),
    e.NOT_FOUND: ("InvalidEndpointOrModel.NotFound", "NotFound"),
    e.CONTEXT: ("InvalidParameter", "BadRequest"),
    e.RATE_LIMIT: ("RateLimitExceeded.EndpointRPMExceeded", "TooManyRequests"),
    e.SERVER: ("InternalServiceError", "InternalServerError"),
    e.UNAVAILABLE: ("ServiceUnavailable", "ServiceUnavailable"),
    e.OVERLOADED: ("ServerOverloaded", "TooManyRequests"),
}


def ark(err: SimError, request_id: str) -> Body:
    code, kind = _ARK[err.kind]
    message = f"{err.message} Request id: {request_id}"
    return {"error": {"code": code, "message": message, "param": err.param or "", "type": kind}}


_QIANFAN = {
    e.INVALID: ("invalid_argument", "invalid_request_error"),
    e.AUTH: ("invalid_iam_token", "access_denied"),
    e.NOT_FOUND: ("no_such_model", "invalid_request_error"),
    e.CONTEXT: ("prompt_tokens_too_long", "invalid_request_error"),
    e.RATE_LIMIT: ("rpm_rate_limit_exceeded", "rate_limit_exceeded"),
    e.SERVER: ("internal_error", "internal_error"),
    e.UNAVAILABLE: ("service_unavailable", "internal_error"),
    e.OVERLOADED: ("service_unavailable", "internal_error"),
}


def qianfan(err: SimError, request_id: str) -> Body:
    code, kind = _QIANFAN[err.kind]
    return {"id": f"as-{request_id[:10]}", "error": {"code": code, "message": err.message, "type": kind}}


_MINIMAX = {
    e.INVALID: 2013,
    e.AUTH: 1004,
    e.NOT_FOUND: 2013,
    e.CONTEXT: 1039,
    e.RATE_LIMIT: 1002,
    e.SERVER: 1000,
    e.UNAVAILABLE: 1001,
    e.OVERLOADED: 1001,
}


def minimax(err: SimError, request_id: str) -> Body:
    body = openai(err, request_id)
    body["base_resp"] = {"status_code": _MINIMAX[err.kind], "status_msg": err.message}
    return body


_GEMINI = {
    e.INVALID: "INVALID_ARGUMENT",
    e.AUTH: "UNAUTHENTICATED",
    e.NOT_FOUND: "NOT_FOUND",
    e.CONTEXT: "INVALID_ARGUMENT",
    e.RATE_LIMIT: "RESOURCE_EXHAUSTED",
    e.SERVER: "INTERNAL",
    e.UNAVAILABLE: "UNAVAILABLE",
    e.OVERLOADED: "UNAVAILABLE",
}


def gemini(err: SimError, request_id: str) -> Body:
    return [{"error": {"code": err.status, "message": err.message, "status": _GEMINI[err.kind]}}]


def openrouter(err: SimError, request_id: str) -> Body:
    return {
        "error": {"code": err.status, "message": err.message, "metadata": {"raw": err.code or err.kind}},
        "user_id": "user_sim",
    }


_ANTHROPIC = {
    e.INVALID: "invalid_request_error",
    e.AUTH: "authentication_error",
    e.NOT_FOUND: "not_found_error",
    e.CONTEXT: "invalid_request_error",
    e.RATE_LIMIT: "rate_limit_error",
    e.SERVER: "api_error",
    e.UNAVAILABLE: "api_error",
    e.OVERLOADED: "overloaded_error",
}


def anthropic(err: SimError, request_id: str) -> Body:
    return {"type": "error", "error": {"type": _ANTHROPIC[err.kind], "message": err.message}, "request_id": request_id}


STYLES: dict[str, Callable[[SimError, str], Body]] = {
    "openai": openai,
    "together": openai,
    "deepseek": deepseek,
    "moonshot": moonshot,
    "zhipu": zhipu,
    "qwen": qwen,
    "ark": ark,
    "qianfan": qianfan,
    "minimax": minimax,
    "gemini": gemini,
    "openrouter": openrouter,
    "anthropic": anthropic,
}


def render_error(style: str, err: SimError, request_id: str) -> tuple[bytes, str]:
    """Body bytes and content type. 502s come from the provider's proxy as HTML, like the real ones."""
    if err.kind == e.BAD_GATEWAY:
        return _BAD_GATEWAY_HTML, "text/html"
    return orjson.dumps(STYLES[style](err, request_id)), "application/json"
