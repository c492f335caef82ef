"""What a usage event (and so a generation record) keeps of each answer, per dialect, through the real
gateway and the simulated providers: reasoning tokens where the dialect counts them and where it only
streams the thinking (Claude, Kimi), cache writes by TTL, the finish reason and the provider's response id."""

from __future__ import annotations

from typing import Any

from tests.routing.conftest import sim_requests

MSG = [{"role": "user", "content": "Think about caches, then say hello."}]


def _truth(sim: Any, provider: str) -> dict[str, Any]:
    return sim_requests(sim, provider, 1)[0]["sim"]["reported_usage"]


def test_openai_reasoning_tokens_are_read_from_usage(gateway, sim, oai, tenant):
    answer = oai.chat.completions.create(
        model="gpt-5-mini", messages=MSG, max_completion_tokens=400, extra_body={"provider": {"only": ["openai"]}}
    )
    [event] = tenant.wait_events(1)
    truth = _truth(sim, "openai")
    assert event["tokens"]["reasoning"] == truth["reasoning"] > 0
    assert "reasoning_estimated" not in event["flags"]
    assert event["finish_reason"] == answer.choices[0].finish_reason
    assert event["upstream_id"].startswith("chatcmpl-") and event["end_state"] == "completed"


def test_claude_thinking_is_counted_from_the_streamed_thinking(gateway, sim, claude, tenant):
    with claude.messages.stream(
        model="claude-sonnet-4.5",
        max_tokens=2000,
        messages=MSG,
        thinking={"type": "enabled", "budget_tokens": 1024},
        extra_body={"provider": {"only": ["anthropic"]}},
    ) as stream:
        final = stream.get_final_message()
    [event] = tenant.wait_events(1)
    truth = _truth(sim, "anthropic")
    assert truth["reasoning"] > 0  # the provider thought, and billed it inside output_tokens
    assert event["tokens"]["reasoning"] == truth["reasoning"] and "reasoning_estimated" in event["flags"]
    assert event["tokens"]["output"] == truth["output"]
    assert event["cost_micros"] == sim_requests(sim, "anthropic", 1)[0]["sim"]["billed_cost_micros"]  # unchanged
    assert event["finish_reason"] == final.stop_reason and event["upstream_id"].startswith("msg_")


def test_kimi_thinking_is_counted_from_reasoning_content(gateway, sim, oai, tenant):
    oai.chat.completions.create(
        model="kimi-k2-thinking", messages=MSG, max_tokens=600, extra_body={"provider": {"only": ["moonshot"]}}
    )
    [event] = tenant.wait_events(1)
    truth = _truth(sim, "moonshot")
    assert truth["reasoning"] > 0  # moonshot's usage has no reasoning count; the answer carries the thinking
    assert event["tokens"]["reasoning"] == truth["reasoning"] and "reasoning_estimated" in event["flags"]
    assert event["finish_reason"] in ("stop", "length") and event["upstream_id"]


def test_anthropic_cache_writes_are_kept_by_ttl(gateway, sim, claude, tenant):
    system = [
        {
            "type": "text",
            "text": "You are a careful assistant. " * 400,
            "cache_control": {"type": "ephemeral", "ttl": "1h"},
        }
    ]
    claude.messages.create(
        model="claude-sonnet-4.5",
        max_tokens=20,
        system=system,
        messages=MSG,
        extra_body={"provider": {"only": ["anthropic"]}},
    )
    [event] = tenant.wait_events(1)
    truth = _truth(sim, "anthropic")
    assert event["tokens"]["cache_write_1h"] == truth["cache_write_1h"] > 0
    assert event["tokens"]["cache_write_5m"] == truth["cache_write_5m"]
    assert event["cost_micros"] == sim_requests(sim, "anthropic", 1)[0]["sim"]["billed_cost_micros"]
