"""Prompt caching per key policy: the Claude Code billing block breaks raw_prefix caches only."""

from __future__ import annotations

LONG = "The quick brown fox jumps over the lazy dog. " * 400  # ~4500 tokens


def _billing(cch: str) -> dict:
    return {"type": "text", "text": f"x-anthropic-billing-header: cc_version=2.0.14; cc_entrypoint=cli; cch={cch};"}


def _anthropic_body(model: str, cch: str, question: str) -> dict:
    system = [_billing(cch), {"type": "text", "text": LONG, "cache_control": {"type": "ephemeral"}}]
    return {"model": model, "max_tokens": 50, "system": system, "messages": [{"role": "user", "content": question}]}


def _usage(http, provider: str, body: dict) -> dict:
    response = http.post(f"/{provider}/v1/messages", json=body)
    assert response.status_code == 200, response.text
    return response.json()["usage"]


def test_raw_prefix_provider_misses_when_cch_changes(http):
    first = _usage(http, "deepseek-anthropic", _anthropic_body("deepseek-chat", "abc12", "one"))
    same = _usage(http, "deepseek-anthropic", _anthropic_body("deepseek-chat", "abc12", "two"))
    changed = _usage(http, "deepseek-anthropic", _anthropic_body("deepseek-chat", "ff901", "three"))
    assert first["cache_read_input_tokens"] == 0
    assert same["cache_read_input_tokens"] > 4000
    assert same["cache_read_input_tokens"] % 64 == 0  # 64-token blocks
    assert changed["cache_read_input_tokens"] == 0


def test_normalized_provider_hits_despite_changing_cch(http):
    first = _usage(http, "anthropic", _anthropic_body("claude-sonnet-4.5", "abc12", "one"))
    second = _usage(http, "anthropic", _anthropic_body("claude-sonnet-4.5", "zz999", "two"))
    assert first["cache_creation_input_tokens"] > 4000 and first["cache_read_input_tokens"] == 0
    assert first["cache_creation"]["ephemeral_5m_input_tokens"] == first["cache_creation_input_tokens"]
    assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    assert second["cache_creation_input_tokens"] == 0
    assert second["input_tokens"] < 100  # input_tokens excludes cache reads


def test_explicit_cache_needs_a_breakpoint_and_honours_1h_ttl(http):
    body = _anthropic_body("claude-sonnet-4.5", "a", "q")
    body["system"][1]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}
    usage = _usage(http, "anthropic", body)
    assert usage["cache_creation"]["ephemeral_1h_input_tokens"] > 4000
    del body["system"][1]["cache_control"]
    assert _usage(http, "anthropic", body)["cache_read_input_tokens"] == 0


def test_normalized_ignores_string_versus_text_block_shape(http):
    as_string = {
        "model": "gpt-4.1",
        "messages": [{"role": "system", "content": LONG}, {"role": "user", "content": "a"}],
    }
    as_blocks = {
        "model": "gpt-4.1",
        "messages": [{"role": "system", "content": [{"type": "text", "text": LONG}]}, {"role": "user", "content": "b"}],
    }
    http.post("/openai/v1/chat/completions", json=as_string)
    usage = http.post("/openai/v1/chat/completions", json=as_blocks).json()["usage"]
    assert usage["prompt_tokens_details"]["cached_tokens"] >= 4096
    assert usage["prompt_tokens_details"]["cached_tokens"] % 128 == 0


def test_raw_prefix_misses_when_an_earlier_message_is_reshaped(http):
    as_string = {
        "model": "deepseek-chat",
        "messages": [{"role": "system", "content": LONG}, {"role": "user", "content": "a"}],
    }
    as_blocks = {
        "model": "deepseek-chat",
        "messages": [{"role": "system", "content": [{"type": "text", "text": LONG}]}, {"role": "user", "content": "b"}],
    }
    http.post("/deepseek/v1/chat/completions", json=as_string)
    again = http.post(
        "/deepseek/v1/chat/completions",
        json={**as_string, "messages": [as_string["messages"][0], {"role": "user", "content": "c"}]},
    ).json()["usage"]
    reshaped = http.post("/deepseek/v1/chat/completions", json=as_blocks).json()["usage"]
    assert again["prompt_cache_hit_tokens"] > 4000
    assert reshaped["prompt_cache_hit_tokens"] == 0
    assert reshaped["prompt_cache_miss_tokens"] == reshaped["prompt_tokens"]


def test_short_prompts_are_not_cached(http):
    body = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "short"}]}
    http.post("/openai/v1/chat/completions", json=body)
    assert (
        http.post("/openai/v1/chat/completions", json=body).json()["usage"]["prompt_tokens_details"]["cached_tokens"]
        == 0
    )


def test_reset_clears_caches(http):
    body = {"model": "gpt-4.1", "messages": [{"role": "system", "content": LONG}, {"role": "user", "content": "a"}]}
    http.post("/openai/v1/chat/completions", json=body)
    http.post("/_sim/reset")
    assert (
        http.post("/openai/v1/chat/completions", json=body).json()["usage"]["prompt_tokens_details"]["cached_tokens"]
        == 0
    )
