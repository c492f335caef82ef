"""A Codex-shaped agent session (tests/fixtures/agent-session-responses) through ``POST /v1/responses``:
every turn accepted, translated for both upstream dialects, held on one offering by its
``prompt_cache_key``, and each turn's forwarded prompt a byte prefix of the next one's."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import orjson
import pytest
import requests as httpx

from tests.routing.conftest import sim_requests

pytestmark = pytest.mark.cluster

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agent-session-responses"
LITE = [f"lite-turn{n}.json" for n in (1, 2, 3)]


def _turn(name: str, **changes: Any) -> dict[str, Any]:
    body = orjson.loads((FIXTURES / name).read_bytes())
    return {**body, **changes}


def _post(gateway: Any, tenant: Any, body: dict[str, Any]) -> tuple[httpx.Response, list[dict[str, Any]]]:
    headers = {"authorization": f"Bearer {tenant.key}", "originator": "codex_exec", "session-id": "s1"}
    response = httpx.post(f"{gateway.base_url}/v1/responses", json=body, headers=headers, timeout=20)
    lines = response.content.decode().split("\n")  # UTF-8 (no charset on the stream): not split at U+0085
    events = [orjson.loads(line[6:]) for line in lines if line.startswith("data: ")]
    return response, events


def _forwarded(sim: Any, provider: str, n: int) -> list[dict[str, Any]]:
    return [r["json"] for r in reversed(sim_requests(sim, provider, n))]


@pytest.mark.parametrize(("provider", "dialect"), [("deepseek", "openai"), ("deepseek-anthropic", "anthropic")])
def test_session_turns_are_accepted_and_each_prompt_extends_the_last(gateway, sim, tenant, provider, dialect):
    for name in LITE:
        response, events = _post(gateway, tenant, _turn(name, model="deepseek-v4-flash", provider={"only": [provider]}))
        assert response.status_code == 200, response.text
        assert events[0]["type"] == "response.created" and events[-1]["type"] == "response.completed"
        assert [e["sequence_number"] for e in events] == list(range(len(events)))
        assert response.headers["x-tokenway-provider"] == provider
    turns = _forwarded(sim, provider, 3)
    assert len(turns) == 3
    names = {t["function"]["name"] if dialect == "openai" else t["name"] for t in turns[0]["tools"]}
    assert names == {"run_script", "wait", "sleep", "send_message"}  # namespaced and custom tools, flattened
    assert "encrypted" not in orjson.dumps(turns[0]["tools"]).decode()
    for earlier, later in itertools.pairwise(turns):
        assert orjson.dumps(later["messages"]).startswith(orjson.dumps(earlier["messages"])[:-1])
        assert later["tools"] == earlier["tools"] and later.get("system") == earlier.get("system")
    events = tenant.wait_events(3)
    assert [e["dialect_in"] for e in events] == ["responses"] * 3
    assert len({e["cache_fingerprint"] for e in events}) == 1


def test_session_stays_on_one_offering_by_prompt_cache_key(gateway, sim, tenant):
    providers = []
    for name in LITE:
        response, events = _post(gateway, tenant, _turn(name, model="kimi-k2"))
        assert response.status_code == 200, response.text
        providers.append(response.headers["x-tokenway-provider"])
    events = tenant.wait_events(3)
    if all(e["attempts"] == 1 for e in events):  # a fault may legitimately fail over
        assert len(set(providers)) == 1, providers
    assert len({e["cache_fingerprint"] for e in events}) == 1


def test_classic_shape_turn_is_accepted(gateway, sim, tenant):
    response, events = _post(gateway, tenant, _turn("classic-turn1.json", model="gpt-5"))
    assert response.status_code == 200, response.text
    assert events[-1]["type"] == "response.completed"
    forwarded = _forwarded(sim, response.headers["x-tokenway-provider"], 1)[0]
    assert forwarded["messages"][0]["role"] == "system" and len(forwarded["tools"]) == 4
