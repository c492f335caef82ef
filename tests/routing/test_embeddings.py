"""``POST /v1/embeddings`` with the official OpenAI SDK through the gateway to the simulated providers:
floats and base64, batches and token arrays, ``dimensions``, routing among embedding offerings, failover
before the first byte, input-token usage at the catalog price, and 400s naming the field."""

from __future__ import annotations

import base64
import math
import struct

import openai
import pytest
import requests

from contracts.usage import Prices, Tokens, cost_micros
from tests.routing.conftest import add_fault, sim_requests

MODEL = "text-embedding-3-small"  # openai and openrouter
PRICE = Prices(input=20000, output=0)  # demo/catalog.yaml: $0.02 per 1M input tokens at both


def _post(gateway, key: str, body: dict, path: str = "/v1/embeddings") -> requests.Response:
    return requests.post(f"{gateway.base_url}{path}", json=body, headers={"authorization": f"Bearer {key}"}, timeout=20)


def test_floats_for_a_batch_with_input_token_usage_billed_at_the_catalog_price(oai, tenant):
    raw = oai.embeddings.with_raw_response.create(
        model=MODEL, input=["hello world", "goodbye"], encoding_format="float"
    )
    answer = raw.parse()
    assert [d.index for d in answer.data] == [0, 1] and answer.model == MODEL
    assert all(
        len(d.embedding) == 1536 and math.isclose(sum(x * x for x in d.embedding), 1, rel_tol=1e-6) for d in answer.data
    )
    assert answer.usage.prompt_tokens == answer.usage.total_tokens > 0
    assert raw.headers["x-tokenway-provider"] in ("openai", "openrouter")
    [event] = tenant.wait_events(1)
    assert event["request_id"] == raw.headers["x-request-id"] and event["status"] == "ok"
    assert event["model"] == MODEL and event["stream"] is False and event["usage_source"] == "provider"
    tokens = event["tokens"]
    assert tokens["input_uncached"] == answer.usage.prompt_tokens and tokens["output"] == 0
    assert event["cost_micros"] == cost_micros(Tokens(input_uncached=answer.usage.prompt_tokens), PRICE)
    assert answer.usage.model_extra["cost"] * 1_000_000 == pytest.approx(event["charge_micros"])


def test_the_sdk_default_base64_with_dimensions_reaches_the_provider_and_decodes(oai, sim, tenant):
    answer = oai.embeddings.create(model=MODEL, input="hello world", dimensions=256)  # the SDK asks for base64
    [item] = answer.data
    assert len(item.embedding) == 256 and math.isclose(sum(x * x for x in item.embedding), 1, rel_tol=1e-5)
    [event] = tenant.wait_events(1)
    sent = sim_requests(sim, event["provider"], limit=1)[0]
    assert sent["path"].endswith("/v1/embeddings")
    assert sent["json"]["dimensions"] == 256 and sent["json"]["encoding_format"] == "base64"
    assert "provider" not in sent["json"] and sent["json"]["model"] in (MODEL, f"openai/{MODEL}")


def test_base64_is_relayed_as_sent(gateway, tenant):
    response = _post(
        gateway, tenant.key, {"model": MODEL, "input": "hello", "encoding_format": "base64", "dimensions": 8}
    )
    assert response.status_code == 200, response.text
    packed = base64.b64decode(response.json()["data"][0]["embedding"])
    assert len(struct.unpack("<8f", packed)) == 8


def test_token_arrays_count_their_tokens(oai, tenant):
    answer = oai.embeddings.create(model=MODEL, input=[[1, 2, 3], [4, 5]], encoding_format="float")
    assert len(answer.data) == 2 and answer.usage.prompt_tokens == 5
    assert oai.embeddings.create(model=MODEL, input=[7, 8, 9, 10]).usage.prompt_tokens == 4


def test_cost_mode_and_failover_before_the_first_byte(gateway, sim, tenant):
    add_fault(sim, provider="openai", model=MODEL, kind="http_503", count=1)
    body = {"model": MODEL, "input": "hi", "provider": {"order": ["openai", "openrouter"]}}
    response = _post(gateway, tenant.key, body)
    assert response.status_code == 200, response.text
    assert response.headers["x-tokenway-provider"] == "openrouter"
    assert "+failover" in response.headers["x-tokenway-route"]
    [event] = tenant.wait_events(1)
    assert event["attempts"] == 2 and event["provider"] == "openrouter"


def test_provider_preferences_and_modes_pick_among_embedding_offerings(gateway, sim, tenant):
    body = {"model": MODEL, "input": "hi", "provider": {"only": ["openrouter"]}}
    response = _post(gateway, tenant.key, body)
    assert response.status_code == 200 and response.headers["x-tokenway-provider"] == "openrouter"
    assert response.json()["model"] == MODEL  # the public name, whatever the provider calls it
    assert sim_requests(sim, "openrouter", 1)[0]["json"]["model"] == f"openai/{MODEL}"
    cheapest = requests.post(
        f"{gateway.base_url}/v1/embeddings",
        json={"model": MODEL, "input": "hi"},
        timeout=20,
        headers={"authorization": f"Bearer {tenant.key}", "x-tokenway-route": "cost"},
    )
    assert cheapest.status_code == 200 and cheapest.headers["x-tokenway-route"].startswith("cost")


def test_an_embedding_call_is_held_and_refused_without_balance(gateway, redis_client):
    from tests.routing.harness import make_tenant

    broke = make_tenant(redis_client, balance=0)
    response = _post(gateway, broke.key, {"model": MODEL, "input": "hi"})
    assert response.status_code == 402 and response.json()["error"]["code"] == "insufficient_balance"


BAD = [
    ({"model": MODEL}, "input"),
    ({"model": MODEL, "input": []}, "input"),
    ({"model": MODEL, "input": [""]}, "input"),
    ({"model": MODEL, "input": ["a", [1, 2]]}, "input"),
    ({"model": MODEL, "input": [{"text": "a"}]}, "input[0]"),
    ({"model": MODEL, "input": [[-1]]}, "input[0][0]"),
    ({"model": MODEL, "input": ["a"] * 2049}, "input"),
    ({"model": MODEL, "input": "a", "encoding_format": "int8"}, "encoding_format"),
    ({"model": MODEL, "input": "a", "dimensions": 0}, "dimensions"),
    ({"model": MODEL, "input": "a", "dimensions": "8"}, "dimensions"),
    ({"input": "a"}, "model"),
    ({"model": MODEL, "input": "a", "stream": True}, "stream"),
]


@pytest.mark.parametrize(("body", "param"), BAD, ids=[p + ":" + str(b)[:40] for b, p in BAD])
def test_bad_inputs_are_400_naming_the_field(gateway, tenant, body, param):
    response = _post(gateway, tenant.key, body)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == param
    assert param.split("[")[0] in error["message"]
    assert tenant.events() == [] or all(e["status"] == "rejected" for e in tenant.events())


def test_a_chat_model_is_not_an_embedding_model_and_back(gateway, tenant, oai):
    response = _post(gateway, tenant.key, {"model": "gpt-4.1-mini", "input": "hi"})
    assert response.status_code == 400 and response.json()["error"]["code"] == "not_an_embedding_model"
    chat = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}
    response = _post(gateway, tenant.key, chat, path="/v1/chat/completions")
    assert response.status_code == 400 and response.json()["error"]["code"] == "embedding_model"
    with pytest.raises(openai.BadRequestError):
        oai.embeddings.create(model="gpt-4.1-mini", input="hi")


def test_the_sdk_against_the_simulated_provider_directly(sim):
    client = openai.OpenAI(base_url=sim.provider_url("openai"), api_key="sim", max_retries=0)
    answer = client.embeddings.create(model=MODEL, input=["a", "b", "c"], dimensions=16)
    assert [len(d.embedding) for d in answer.data] == [16, 16, 16] and answer.usage.prompt_tokens == 3
    again = client.embeddings.create(model=MODEL, input="a", dimensions=16, encoding_format="float")
    assert again.data[0].embedding == pytest.approx(
        answer.data[0].embedding, abs=1e-6
    )  # same input, same vector (float32 in base64)
    with pytest.raises(openai.BadRequestError, match="does not support embeddings"):
        client.embeddings.create(model="gpt-4.1", input="a")
    with pytest.raises(openai.NotFoundError, match="not a chat model"):
        client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hi"}])
