from __future__ import annotations

import time

import pytest

from contracts.tokens import MESSAGE_OVERHEAD_TOKENS, count_text_tokens
from tests.waiting import wait_until


def test_health(http):
    assert http.get("/_sim/health").json() == {"status": "ok"}


def test_requests_log_keeps_requests_as_received(http):
    raw = b'{"model":"gpt-4.1",  "messages":[{"role":"user","content":"hi"}]}'
    http.post("/openai/v1/chat/completions", content=raw, headers={"content-type": "application/json", "x-trace": "t1"})
    entry = http.get("/_sim/requests", params={"provider": "openai", "limit": 5}).json()["requests"][0]
    assert entry["body"] == raw.decode()
    assert entry["json"]["model"] == "gpt-4.1"
    assert entry["headers"]["x-trace"] == "t1"
    assert entry["method"] == "POST" and entry["path"] == "/openai/v1/chat/completions"
    assert entry["timestamp"] <= time.time()


def test_profiles_expose_configured_ground_truth(http):
    data = http.get("/_sim/profiles").json()
    assert len(data["providers"]) >= 10
    offering = data["providers"]["openai"]["offerings"]["gpt-4.1"]
    assert offering["perf"]["ttft_ms"] == 450 and offering["perf"]["tokens_per_s"] == 90
    assert offering["published_prices"]["input"] == 2_000_000
    assert data["providers"]["deepseek"]["offerings"]["deepseek-v4-flash"]["perf"]["tokens_per_s"] == 110
    assert data["providers"]["anthropic"]["offerings"]["claude-sonnet-4.5"]["cache"]["mode"] == "explicit"


def test_token_counting_follows_contracts(http):
    text = "Hello there, how are you today?"
    usage = http.post(
        "/openai/v1/chat/completions", json={"model": "gpt-4.1", "messages": [{"role": "user", "content": text}]}
    ).json()["usage"]
    assert usage["prompt_tokens"] == count_text_tokens(text) + MESSAGE_OVERHEAD_TOKENS


def test_time_scale_shortens_latency(http):
    started = time.monotonic()
    http.post(
        "/anthropic/v1/messages",
        json={"model": "claude-opus-4.1", "max_tokens": 100, "messages": [{"role": "user", "content": "x"}]},
    )
    assert time.monotonic() - started < 0.5  # opus TTFT ~1.6 s sim + generation, x 0.001


def test_clock_drives_daily_drift(sim, http):
    from sim.perf import draw_timing

    offering = sim.fleet.providers["deepseek"].offering("deepseek-chat")
    http.post("/_sim/clock", json={"hour": 21}).raise_for_status()
    evening = draw_timing(
        offering.profile, sim.fleet.clock, sim.fleet.draws_for(offering, b"a"), uncached_tokens=0, incidents=[]
    )
    sim.fleet.reset()
    http.post("/_sim/clock", json={"hour": 4}).raise_for_status()
    night = draw_timing(
        offering.profile, sim.fleet.clock, sim.fleet.draws_for(offering, b"a"), uncached_tokens=0, incidents=[]
    )
    assert abs(evening.ttft_s / night.ttft_s - 1.8) < 0.01


def test_unknown_provider_is_404(http):
    assert http.post("/nope/v1/chat/completions", json={"model": "x", "messages": []}).status_code == 404


def test_requests_log_serialises_any_header_bytes(sim, http):
    # /_sim/requests used to answer 500: header names are multidict.istr (orjson: "Dict key must be
    # str") and non-UTF-8 header bytes came back surrogate-escaped ("surrogates not allowed")
    raw = b'{"model":"gpt-4.1","messages":[{"role":"user","content":"hi"}]}'
    headers = {"content-type": "application/json", "X-Mixed-Case": "1", "x-latin": "d\u00e9j\u00e0".encode("latin-1")}
    http.post("/openai/v1/chat/completions", content=raw, headers=headers)
    response = http.get("/_sim/requests", params={"limit": 5})
    assert response.status_code == 200, response.text
    entry = response.json()["requests"][0]
    assert entry["headers"]["x-latin"] == "d\ufffdj\ufffd"
    assert all(type(name) is str for name in sim.fleet.log.last("openai", 1)[0]["headers"])


def _timing(http, model: str) -> dict[str, float]:
    """The drawn timing of one request (/_sim/requests ground truth): TTFT in sim ms, tokens/s."""
    http.post("/openai/v1/chat/completions", json={"model": model, "messages": [{"role": "user", "content": "hi"}]})
    return http.get("/_sim/requests", params={"provider": "openai", "limit": 1}).json()["requests"][0]["sim"]["timing"]


def _offerings(http) -> dict:
    return http.get("/_sim/profiles", params={"provider": "openai"}).json()["providers"]["openai"]["offerings"]


def test_an_incident_added_at_runtime_slows_one_offering_until_it_is_cleared(sim, http):
    normal = _offerings(http)["gpt-4.1"]["expected"]
    body = {"provider": "openai", "model": "gpt-4.1", "ttft_factor": 6, "tps_factor": 1 / 6, "duration_s": 3600}
    added = http.post("/_sim/incidents", json=body)
    assert added.status_code == 201 and added.json()["incident"]["offerings"] == ["openai/gpt-4.1"]
    offerings = _offerings(http)
    assert offerings["gpt-4.1"]["expected"] == pytest.approx(
        {k: v * (6 if k == "ttft_ms" else 1 / 6) for k, v in normal.items()}
    )
    assert [i["ttft_factor"] for i in offerings["gpt-4.1"]["active_incidents"]] == [6]
    assert offerings["gpt-4.1-mini"]["active_incidents"] == []  # another model of the provider is not touched
    slow = _timing(http, "gpt-4.1")
    http.delete("/_sim/incidents").raise_for_status()
    http.post("/_sim/reset").raise_for_status()  # the same request draws the same timing again
    fast = _timing(http, "gpt-4.1")
    assert slow["ttft_ms"] / fast["ttft_ms"] == pytest.approx(6, rel=0.01)  # the prompt's prefill is not slowed
    assert slow["tokens_per_s"] == pytest.approx(fast["tokens_per_s"] / 6)
    assert _offerings(http)["gpt-4.1"]["active_incidents"] == []


def test_a_runtime_incident_ends_by_itself(sim, http):
    body = {"provider": "openai", "model": "gpt-4.1", "ttft_factor": 6, "duration_s": 0.001}
    assert http.post("/_sim/incidents", json=body).status_code == 201
    wait_until(lambda: _offerings(http)["gpt-4.1"]["active_incidents"] == [], timeout=5, message="incident over")


def test_a_runtime_incident_needs_a_known_offering_and_a_duration(http):
    assert http.post("/_sim/incidents", json={"provider": "nope", "duration_s": 5}).status_code == 400
    assert (
        http.post("/_sim/incidents", json={"provider": "openai", "model": "nope", "duration_s": 5}).status_code == 400
    )
    assert http.post("/_sim/incidents", json={"provider": "openai"}).status_code == 400
    assert (
        http.post("/_sim/incidents", json={"provider": "openai", "kind": "meteor", "duration_s": 5}).status_code == 400
    )
