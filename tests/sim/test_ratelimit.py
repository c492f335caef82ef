from __future__ import annotations

import openai
import pytest

BODY = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]}


def test_rpm_limit_gives_429_with_retry_after_and_headers(http, oai):
    http.post("/_sim/limits", json={"provider": "openai", "model": "gpt-4.1", "rpm": 2}).raise_for_status()
    assert http.post("/openai/v1/chat/completions", json=BODY).status_code == 200
    assert http.post("/openai/v1/chat/completions", json=BODY).headers["x-ratelimit-remaining-requests"] == "0"
    refused = http.post("/openai/v1/chat/completions", json=BODY)
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "rate_limit_exceeded"
    assert int(refused.headers["retry-after"]) >= 1 and int(refused.headers["retry-after-ms"]) > 0
    with oai("openai") as client, pytest.raises(openai.RateLimitError):
        client.chat.completions.create(**BODY)


def test_tpm_limit_counts_prompt_and_max_tokens(http):
    http.post("/_sim/limits", json={"provider": "openai", "model": "gpt-4.1", "tpm": 100}).raise_for_status()
    assert http.post("/openai/v1/chat/completions", json={**BODY, "max_tokens": 50}).status_code == 200
    assert http.post("/openai/v1/chat/completions", json={**BODY, "max_tokens": 60}).status_code == 429


def test_limits_endpoint_starts_a_fresh_window(http):
    http.post("/_sim/limits", json={"provider": "openai", "model": "gpt-4.1", "rpm": 1}).raise_for_status()
    http.post("/openai/v1/chat/completions", json=BODY)
    refused = http.post("/openai/v1/chat/completions", json=BODY)
    assert refused.status_code == 429 and 0 < int(refused.headers["retry-after"]) <= 60
    http.post("/_sim/limits", json={"provider": "openai", "model": "gpt-4.1", "rpm": 1}).raise_for_status()
    assert http.post("/openai/v1/chat/completions", json=BODY).status_code == 200


def test_anthropic_style_429(http):
    http.post("/_sim/limits", json={"provider": "anthropic", "model": "claude-haiku-4.5", "rpm": 0}).raise_for_status()
    response = http.post(
        "/anthropic/v1/messages",
        json={"model": "claude-haiku-4.5", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]},
    )
    assert response.status_code == 429
    assert response.json()["error"]["type"] == "rate_limit_error"
    assert response.headers["anthropic-ratelimit-requests-remaining"] == "0"
    assert "retry-after" in response.headers


def test_provider_specific_429_shapes(http):
    http.post("/_sim/limits", json={"provider": "zhipu", "model": "glm-4.6", "rpm": 0}).raise_for_status()
    response = http.post("/zhipu/v1/chat/completions", json={**BODY, "model": "glm-4.6"})
    assert response.status_code == 429 and response.json()["error"]["code"] == "1302"
