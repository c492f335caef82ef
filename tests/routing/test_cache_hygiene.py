"""Billing-block stripping and prefix identity across an agent session's turns, verified on the
bodies the simulated providers received."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import orjson
import pytest
import requests

from routing.cache_hygiene.billing import strip_openai_messages, strip_system
from routing.cache_hygiene.fingerprint import anthropic_fingerprint
from tests.routing.conftest import sim_requests

# Claude-Code-shaped request bodies of one three-turn session (see the folder's README).
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agent-session"
FORMS = ("plain", "per-request-cch", "zeros")
HEADERS = {"anthropic-version": "2023-06-01", "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14",
           "user-agent": "claude-cli/9.9.9 (external, sdk-cli)", "x-claude-code-session-id": "s-1"}  # fmt: skip


def turns(form: str) -> list[dict]:
    return [json.loads((FIXTURES / f"{form}-turn{n}.json").read_text()) for n in (1, 2, 3)]


# --- unit: the billing block in every form --------------------------------------------------


@pytest.mark.parametrize("form", FORMS)
def test_billing_block_is_removed_from_system_blocks_in_every_form(form):
    for body in turns(form):
        system, changed = strip_system(body["system"])
        assert changed and len(system) == len(body["system"]) - 1
        assert not any("x-anthropic-billing-header" in b["text"] for b in system)


def test_billing_line_is_removed_from_a_string_system_prompt_only_at_the_start():
    text = (
        "x-anthropic-billing-header: cc_version=1.0; cch=abcde; cc_prev_req=req_1; cc_turn_index=3;\nYou are helpful."
    )
    assert strip_system(text) == ("You are helpful.", True)
    untouched = "You are helpful.\nx-anthropic-billing-header: cch=1"
    assert strip_system(untouched) == (untouched, False)


def test_user_text_containing_cch_is_never_touched():
    body = turns("per-request-cch")[2]
    assert "cch=12345" in json.dumps(body["messages"][-1])
    messages = [
        {"role": "system", "content": "x-anthropic-billing-header: cch=00000;\nrules"},
        {"role": "user", "content": "cch=12345 stays"},
    ]
    assert strip_openai_messages(messages)
    assert messages == [{"role": "system", "content": "rules"}, {"role": "user", "content": "cch=12345 stays"}]


def test_fingerprint_is_stable_across_turns_and_billing_forms():
    prints = {anthropic_fingerprint(body) for form in FORMS for body in turns(form)}
    assert len(prints) == 1


# --- integration: what the provider received -------------------------------------------------


def _send(gateway, tenant, body, model, provider):
    body = {**body, "model": model, "max_tokens": 1000, "provider": {"only": [provider]}}
    response = requests.post(
        f"{gateway.base_url}/v1/messages?beta=true", json=body, headers={**HEADERS, "x-api-key": tenant.key}, timeout=20
    )
    assert response.status_code == 200, response.text
    assert b"message_stop" in response.content
    return response


def _prompt_parts(received: dict, dialect: str) -> tuple[bytes, bytes]:
    """(fixed part, messages array) of the forwarded prompt, re-serialised byte-exactly."""
    if dialect == "anthropic":
        return orjson.dumps([received.get("system"), received.get("tools")]), orjson.dumps(received["messages"])
    return orjson.dumps(received.get("tools")), orjson.dumps(received["messages"])


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(
    ("provider", "model", "dialect"),
    [
        ("deepseek-anthropic", "deepseek-v4-flash", "anthropic"),
        ("deepseek", "deepseek-v4-flash", "openai"),
        ("moonshot", "kimi-k2", "openai"),
    ],
)
def test_each_turns_forwarded_prompt_is_a_byte_prefix_of_the_next(gateway, sim, tenant, form, provider, model, dialect):
    for body in turns(form):
        _send(gateway, tenant, body, model, provider)
    received = [r["json"] for r in reversed(sim_requests(sim, provider, 3))]
    assert len(received) == 3
    for earlier, later in itertools.pairwise(received):
        fixed_a, messages_a = _prompt_parts(earlier, dialect)
        fixed_b, messages_b = _prompt_parts(later, dialect)
        assert fixed_a == fixed_b
        assert messages_b.startswith(messages_a[:-1] + b","), "an earlier message's bytes changed"
    raw = json.dumps(received)
    assert "x-anthropic-billing-header" not in raw
    assert "cch=12345" in raw  # the user's text survives
    assert "provider" not in received[0]


def test_first_party_anthropic_keeps_the_billing_block_and_markers_as_sent(gateway, sim, tenant):
    body = turns("per-request-cch")[1]
    _send(gateway, tenant, body, "claude-sonnet-4.5", "anthropic")
    [received] = sim_requests(sim, "anthropic", 1)
    forwarded = received["json"]
    assert forwarded["system"] == body["system"]
    env = body["messages"][1]["content"]  # the role: "system" message joins the user turn before it
    assert forwarded["messages"][0]["content"] == body["messages"][0]["content"] + [{"type": "text", "text": env}]
    assert forwarded["messages"][1:] == body["messages"][2:]
    assert forwarded["model"] != body["model"] and "provider" not in forwarded


def test_later_turns_read_the_providers_cache(gateway, sim, tenant):
    for body in turns("per-request-cch"):
        _send(gateway, tenant, body, "deepseek-v4-flash", "deepseek-anthropic")
    events = tenant.wait_events(3)
    assert events[0]["tokens"]["cache_read"] == 0
    assert (
        events[1]["tokens"]["cache_read"] > 0 and events[2]["tokens"]["cache_read"] >= events[1]["tokens"]["cache_read"]
    )


def test_cache_affinity_keeps_a_conversation_on_the_offering_that_holds_its_cache(gateway, sim, tenant):
    providers = []
    for body in turns("plain"):
        body = {**body, "model": "deepseek-v3.2", "max_tokens": 1000}
        response = requests.post(
            f"{gateway.base_url}/v1/messages", json=body, headers={**HEADERS, "x-api-key": tenant.key}, timeout=20
        )
        assert response.status_code == 200
        providers.append((response.headers["x-tokenway-provider"], response.headers["x-tokenway-route"]))
    assert len({p for p, _ in providers}) == 1
    events = tenant.wait_events(3)
    assert len({e["cache_fingerprint"] for e in events}) == 1 and events[0]["cache_fingerprint"]
