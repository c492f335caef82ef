"""Bad input is the caller's mistake: a precise 400 (or 431) in the caller's shape, nothing reserved,
nothing forwarded, never a 5xx — the inputs that used to reach a provider or crash the gateway."""

from __future__ import annotations

import pytest
import requests

from tests.routing.conftest import sim_requests

MSG = [{"role": "user", "content": "hi"}]
CHAT = {"model": "gpt-4.1-mini", "messages": MSG}
MESSAGES = {"model": "claude-haiku-4.5", "max_tokens": 10, "messages": MSG}


class Deep:
    """A content value nested ``levels`` arrays deep, written as raw JSON (encoders refuse such depth)."""

    def __init__(self, levels: int) -> None:
        self.raw = b"[" * levels + b'"x"' + b"]" * levels


def _deep(levels: int) -> Deep:
    return Deep(levels)


def _encode(body: dict) -> bytes:
    import orjson

    messages = body["messages"]
    if messages and isinstance(messages[0], dict) and isinstance(messages[0].get("content"), Deep):
        shallow = {**body, "messages": [{"role": "user", "content": "@@DEEP@@"}]}
        return orjson.dumps(shallow).replace(b'"@@DEEP@@"', messages[0]["content"].raw)
    return orjson.dumps(body)


CASES = [
    ("/v1/chat/completions", {**CHAT, "max_tokens": -1}, "max_tokens"),
    ("/v1/chat/completions", {**CHAT, "max_tokens": 0}, "max_tokens"),
    ("/v1/chat/completions", {**CHAT, "max_tokens": "10"}, "max_tokens"),
    ("/v1/chat/completions", {**CHAT, "max_tokens": 1.5}, "max_tokens"),
    ("/v1/chat/completions", {**CHAT, "max_completion_tokens": True}, "max_completion_tokens"),
    ("/v1/chat/completions", {**CHAT, "stream": "yes"}, "stream"),
    ("/v1/chat/completions", {**CHAT, "stream_options": "x"}, "stream_options"),
    ("/v1/chat/completions", {**CHAT, "temperature": 7}, "temperature"),
    ("/v1/chat/completions", {**CHAT, "tools": {"a": 1}}, "tools"),
    ("/v1/chat/completions", {**CHAT, "messages": [5, None]}, "messages[0]"),
    ("/v1/chat/completions", {**CHAT, "messages": [{"role": "wizard", "content": "x"}]}, "messages[0].role"),
    ("/v1/chat/completions", {**CHAT, "messages": [{"role": "user", "content": _deep(1000)}]}, None),
    ("/v1/messages", {**MESSAGES, "messages": [5, None]}, "messages[0]"),
    ("/v1/messages", {**MESSAGES, "max_tokens": -1}, "max_tokens"),
    ("/v1/messages", {**MESSAGES, "max_tokens": "10"}, "max_tokens"),
    ("/v1/messages", {**MESSAGES, "stream": "yes"}, "stream"),
    ("/v1/messages", {**MESSAGES, "temperature": 1.5}, "temperature"),
    ("/v1/messages", {**MESSAGES, "system": 5}, "system"),
    ("/v1/messages", {**MESSAGES, "messages": [{"role": "user", "content": 7}]}, "messages[0].content"),
    ("/v1/messages", {**MESSAGES, "messages": [{"role": "user", "content": _deep(1000)}]}, None),
]


@pytest.mark.parametrize(("path", "body", "param"), CASES)
def test_invalid_fields_are_refused_with_the_field_named_and_nothing_forwarded(gateway, tenant, sim, path, body, param):
    before = tenant.avail()
    headers = {"x-api-key": tenant.key, "content-type": "application/json"}
    response = requests.post(f"{gateway.base_url}{path}", data=_encode(body), headers=headers, timeout=20)
    assert response.status_code == 400, response.text[:500]
    error = response.json()["error"]
    assert error["code"] == "invalid_request"
    if path == "/v1/messages":
        assert response.json()["type"] == "error" and error["type"] == "invalid_request_error"
    if param is not None:
        assert error.get("param", param) == param, error  # Anthropic's shape carries no param
        assert param.split("[")[0] in error["message"]
    else:
        assert "nested too deeply" in error["message"]
    assert response.headers["x-request-id"].startswith("gen-")
    assert tenant.avail() == before
    assert sim_requests(sim, "openai", 5) == [] and sim_requests(sim, "anthropic", 5) == []


def test_oversized_headers_are_431_on_the_gateway_and_the_console(gateway, tenant):
    big = {"x-api-key": tenant.key, "x-padding": "a" * 100_000}
    response = requests.post(f"{gateway.base_url}/v1/chat/completions", json=CHAT, headers=big, timeout=20)
    assert response.status_code == 431
    assert response.json()["error"]["code"] == "headers_too_large"
