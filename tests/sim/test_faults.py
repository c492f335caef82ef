"""Every fault kind, injected at runtime through POST /_sim/faults."""

from __future__ import annotations

import time

import httpx2
import openai
import pytest

from tests.sim.conftest import inject
from tests.waiting import wait_until

BODY = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]}
URL = "/openai/v1/chat/completions"


@pytest.mark.parametrize(
    ("kind", "status"), [("http_500", 500), ("http_503", 503), ("http_529", 529), ("http_429", 429)]
)
def test_http_faults_return_the_status_once(http, kind, status):
    inject(http, provider="openai", kind=kind, count=1)
    failed = http.post(URL, json=BODY)
    assert failed.status_code == status
    assert failed.json()["error"]["message"]
    if status in (429, 503, 529):
        assert int(failed.headers["retry-after"]) >= 1
    assert http.post(URL, json=BODY).status_code == 200


def test_502_comes_as_an_html_proxy_page(http):
    inject(http, provider="openai", kind="http_502", count=1)
    response = http.post(URL, json=BODY)
    assert response.status_code == 502
    assert response.headers["content-type"].startswith("text/html")


def test_529_overloaded_in_anthropic_shape(http):
    inject(http, provider="anthropic", model="claude-haiku-4.5", kind="http_529", count=1)
    response = http.post(
        "/anthropic/v1/messages",
        json={"model": "claude-haiku-4-5-20251001", "max_tokens": 10, "messages": [{"role": "user", "content": "x"}]},
    )
    assert response.status_code == 529
    assert response.json()["error"]["type"] == "overloaded_error"


@pytest.mark.parametrize("kind", ["connection_refused", "connection_reset"])
def test_connection_faults_drop_the_connection(oai, http, kind):
    inject(http, provider="openai", kind=kind, count=1)
    with oai("openai") as client, pytest.raises(openai.APIConnectionError):
        client.chat.completions.create(**BODY)
    assert http.post(URL, json=BODY).status_code == 200


def test_stream_cut_loses_the_final_usage_chunk(oai, http):
    inject(http, provider="openai", kind="stream_cut", count=1)
    seen = []
    with oai("openai") as client, pytest.raises(openai.APIConnectionError):
        for chunk in client.chat.completions.create(**BODY, stream=True, stream_options={"include_usage": True}):
            seen.append(chunk)
    assert seen and all(chunk.usage is None for chunk in seen)


def test_stall_before_first_token_sends_headers_then_waits(http, sim):
    inject(http, provider="openai", kind="stall_before_first_token", count=1, stall_s=300)  # 0.3 s real
    with (
        httpx2.Client(timeout=httpx2.Timeout(5, read=0.1)) as client,
        client.stream("POST", sim.base_url + URL, json={**BODY, "stream": True}) as response,
    ):
        assert response.status_code == 200
        with pytest.raises(httpx2.ReadTimeout):
            for _ in response.iter_bytes():
                pass


def test_stall_mid_stream_pauses_between_chunks(http, sim):
    inject(http, provider="openai", kind="stall_mid_stream", count=1, stall_s=300)
    started = time.monotonic()
    text = http.post(URL, json={**BODY, "stream": True}).text
    assert time.monotonic() - started >= 0.3
    assert text.endswith("data: [DONE]\n\n")


def test_slow_drip_divides_the_output_speed():
    from sim.server import start_in_thread

    body = {**BODY, "model": "gpt-4.1-mini", "stream": True, "max_tokens": 400}
    with start_in_thread(seed=3, time_scale=0.01) as handle, httpx2.Client(base_url=handle.base_url) as client:
        inject(client, provider="openai", kind="slow_drip", count=1)
        started = time.monotonic()
        client.post(URL, json=body)
        elapsed = time.monotonic() - started
        output = client.get("/_sim/requests", params={"provider": "openai", "limit": 1}).json()["requests"][0]["sim"][
            "true_usage"
        ]["output"]
    normal_s = output / 120 * 0.01  # gpt-4.1-mini: 120 tokens/s, time scale 0.01
    assert elapsed > 0.5 * 20 * normal_s  # drip_factor 20, generous for jitter


def test_rate_and_duration_rules_expire(sim, http):
    added = http.post("/_sim/faults", json={"provider": "openai", "kind": "http_500", "rate": 1.0, "duration_s": 0.001})
    added.raise_for_status()
    until = added.json()["fault"]["until"]  # in the fleet's sim time
    wait_until(lambda: sim.fleet.clock.now() >= until, timeout=5, message="the rule's 1 ms never ran out")
    assert http.post(URL, json=BODY).status_code == 200


def test_unknown_fault_kind_is_refused(http):
    response = http.post("/_sim/faults", json={"provider": "openai", "kind": "meteor"})
    assert response.status_code == 400


def test_delete_clears_faults(http):
    inject(http, provider="openai", kind="http_500")
    http.delete("/_sim/faults")
    assert http.post(URL, json=BODY).status_code == 200


def test_profile_configured_fault_rates_fire(sim, http):
    # bargain-cloud's profile fails ~2% of requests with 500 and cuts ~1% of streams
    statuses = [
        http.post(
            "/bargain-cloud/v1/chat/completions",
            json={"model": "glm-4.6", "messages": [{"role": "user", "content": f"q{i}"}]},
        ).status_code
        for i in range(300)
    ]
    assert statuses.count(500) > 0


def test_a_caller_gone_before_a_plain_answer_is_no_server_error(http, sim, caplog):
    """A probe cut short at shutdown leaves while the fleet 'generates': nothing to log as an error."""
    import logging

    inject(http, provider="openai", kind="stall_before_first_token", count=1, stall_s=200)  # 0.2 s real
    with httpx2.Client(timeout=httpx2.Timeout(5, read=0.05)) as client, pytest.raises(httpx2.ReadTimeout):
        client.post(sim.base_url + URL, json=BODY)  # not streamed: the answer comes whole after the stall
    caplog.set_level(logging.ERROR, logger="aiohttp.server")
    started = time.monotonic()
    wait_until(lambda: time.monotonic() - started > 0.4, timeout=2, message="the stalled answer's turn")
    assert [r.getMessage() for r in caplog.records if r.name == "aiohttp.server"] == []
    assert http.post(URL, json=BODY).status_code == 200  # the fleet still serves


def test_a_caller_gone_before_a_streams_first_byte_is_no_server_error(caplog):
    """A hedge's losing attempt is closed while the fleet waits for its first token: nothing to log."""
    import logging

    from sim.server import start_in_thread

    caplog.set_level(logging.ERROR, logger="aiohttp.server")
    body = {**BODY, "stream": True}
    with start_in_thread(seed=3, time_scale=1.0) as fleet:  # real-time latencies: the first token takes a while
        with httpx2.Client(timeout=httpx2.Timeout(5, read=0.01)) as client, pytest.raises(httpx2.ReadTimeout):
            client.post(fleet.base_url + URL, json=body)

        def noticed() -> bool:
            logged = httpx2.get(fleet.base_url + "/_sim/requests?provider=openai&limit=5").json()["requests"]
            return any(entry.get("sim", {}).get("client_gone") for entry in logged)

        wait_until(noticed, timeout=10, message="the fleet never noticed the caller left")
    assert [r.getMessage() for r in caplog.records if r.name == "aiohttp.server"] == []
