"""Model names people send, through the real gateway with both SDKs: the resolved catalog model
routes, bills, names the answer (both dialects, stream and not) and shows in x-tokenway-route. An
unknown version of a known family is a 404 naming the family's newest model, unless the key opted
in to family fallback; then that model serves and the header says so."""

from __future__ import annotations

import anthropic
import openai
import pytest
import redis

from tests.routing.conftest import sim_requests
from tests.routing.harness import make_tenant

HI = [{"role": "user", "content": "Say hi"}]


def test_dated_official_id_is_served_as_the_catalog_model(claude, tenant, sim):
    raw = claude.messages.with_raw_response.create(model="claude-haiku-4-5-20251001", max_tokens=50, messages=HI)
    message = raw.parse()
    assert message.model == "claude-haiku-4.5"
    assert raw.headers["x-tokenway-route"].startswith("alias:claude-haiku-4-5-20251001->claude-haiku-4.5;balanced")
    [event] = tenant.wait_events(1)
    assert event["model"] == "claude-haiku-4.5" and event["status"] == "ok"
    assert sim_requests(sim, "anthropic", 1)[0]["json"]["model"] == "claude-haiku-4-5-20251001"


def test_dateless_dashed_id_streams_with_the_catalog_model_in_every_chunk(oai):
    chunks = list(oai.chat.completions.create(model="gpt-4-1-mini", messages=HI, stream=True))
    assert chunks and {c.model for c in chunks} == {"gpt-4.1-mini"}


def test_family_alias_streams_anthropic_events_naming_the_catalog_model(claude):
    with claude.messages.stream(model="haiku", max_tokens=50, messages=HI) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text and final.model == "claude-haiku-4.5"


def test_vendor_slug_whole_answer_names_the_catalog_model(oai):
    raw = oai.chat.completions.with_raw_response.create(model="openai/gpt-4.1-mini", messages=HI, max_tokens=20)
    assert raw.parse().model == "gpt-4.1-mini"
    assert raw.headers["x-tokenway-route"].startswith("alias:openai/gpt-4.1-mini->gpt-4.1-mini;")


@pytest.fixture
def fallback(gateway, redis_client: redis.Redis):
    """A tenant whose key opted in to model family fallback, and both SDKs on it."""
    tenant = make_tenant(redis_client, model_family_fallback=True)
    oai = openai.OpenAI(base_url=f"{gateway.base_url}/v1", api_key=tenant.key, max_retries=0, timeout=20)
    claude = anthropic.Anthropic(base_url=gateway.base_url, api_key=tenant.key, max_retries=0, timeout=20)
    return tenant, oai, claude


def test_with_family_fallback_an_unknown_member_goes_to_the_newest_of_its_family(fallback):
    tenant, oai, claude = fallback
    raw = claude.messages.with_raw_response.create(model="claude-haiku-9-9", max_tokens=50, messages=HI)
    assert raw.parse().model == "claude-haiku-4.5"
    assert raw.headers["x-tokenway-route"].startswith("family:claude-haiku-9-9->claude-haiku-4.5;")
    completion = oai.chat.completions.with_raw_response.create(model="gpt-7.1-nova", messages=HI, max_tokens=20)
    assert completion.parse().model == "gpt-5"
    assert completion.headers["x-tokenway-route"].startswith("family:gpt-7.1-nova->gpt-5;")
    events = tenant.wait_events(2)
    assert [e["model"] for e in events] == ["claude-haiku-4.5", "gpt-5"]
    assert [e["route_reason"].split(";")[0] for e in events] == [
        "family:claude-haiku-9-9->claude-haiku-4.5",
        "family:gpt-7.1-nova->gpt-5",
    ]


@pytest.mark.adversarial
@pytest.mark.parametrize(
    ("asked", "newest"),
    [
        ("claude-opus-99-99", "claude-opus-4.1"),
        ("claude-haiku-9-9", "claude-haiku-4.5"),
        ("claude-3-7-sonnet-20250219", "claude-sonnet-4.5"),
    ],
)
def test_an_unknown_version_is_a_404_for_the_anthropic_sdk_naming_the_family(claude, tenant, sim, asked, newest):
    before = tenant.avail()
    with pytest.raises(anthropic.NotFoundError) as info:
        claude.messages.create(model=asked, max_tokens=20, messages=HI)
    error = info.value.body["error"]
    assert error["type"] == "not_found_error"
    assert f"Did you mean: {newest}" in error["message"] and "family fallback" in error["message"]
    assert sim_requests(sim, "anthropic", 5) == [] and tenant.avail() == before
    [event] = tenant.wait_events(1)
    assert (event["status"], event["http_status"], event["error_code"]) == ("rejected", 404, "model_not_found")
    assert event["cost_micros"] == event["charge_micros"] == 0


@pytest.mark.adversarial
@pytest.mark.parametrize(
    ("asked", "newest"), [("gpt-9-imaginary", "gpt-5"), ("gpt-7.1-nova", "gpt-5"), ("gpt-6-mini", "gpt-5-mini")]
)
def test_an_unknown_version_is_a_404_for_the_openai_sdk_naming_the_family(oai, tenant, sim, asked, newest):
    before = tenant.avail()
    for call in (
        lambda: oai.chat.completions.create(model=asked, messages=HI, max_tokens=20),
        lambda: oai.responses.create(model=asked, input="Say hi", max_output_tokens=30),
        lambda: oai.models.retrieve(asked),
    ):
        with pytest.raises(openai.NotFoundError) as info:
            call()
        assert info.value.body["code"] == "model_not_found" and info.value.body["param"] == "model"
        assert info.value.body["message"].count(f"Did you mean: {newest}") == 1
    assert sim_requests(sim, "openai", 5) == [] and sim_requests(sim, "openrouter", 5) == []
    assert tenant.avail() == before


def test_alias_across_dialects_names_the_catalog_model(claude):
    message = claude.messages.create(
        model="gpt-4-1-mini", max_tokens=30, messages=HI
    )  # OpenAI-dialect offering, Anthropic caller
    assert message.model == "gpt-4.1-mini"


def test_unknown_model_is_404_with_the_closest_names_in_both_shapes(oai, claude, tenant):
    with pytest.raises(openai.NotFoundError) as info:
        oai.chat.completions.create(model="claude-sonet-4.5", messages=HI)
    assert info.value.body["code"] == "model_not_found"
    assert "Did you mean: claude-sonnet-4.5" in info.value.body["message"]
    with pytest.raises(anthropic.NotFoundError) as other:
        claude.messages.create(model="clade-haiku", max_tokens=10, messages=HI)
    assert other.value.body["error"]["type"] == "not_found_error"
    assert "claude-haiku" in other.value.body["error"]["message"]


def test_key_scope_applies_to_the_resolved_model(gateway, redis_client):
    scoped = make_tenant(redis_client, allowed_models=("claude-haiku-4.5",))
    client = anthropic.Anthropic(base_url=gateway.base_url, api_key=scoped.key, max_retries=0)
    assert client.messages.create(model="haiku", max_tokens=20, messages=HI).model == "claude-haiku-4.5"
    with pytest.raises(anthropic.PermissionDeniedError):
        client.messages.create(model="sonnet", max_tokens=20, messages=HI)


def test_count_tokens_accepts_aliases(claude):
    assert claude.messages.count_tokens(model="sonnet", messages=HI).input_tokens > 0


def test_models_list_shows_aliases_and_official_ids(oai):
    listed = {m.id: m for m in oai.models.list()}
    sonnet = listed["claude-sonnet-4.5"].model_extra
    assert {"sonnet", "claude-sonnet-4-5-20250929", "claude-sonnet-4-5", "anthropic/claude-sonnet-4.5"} <= set(
        sonnet["aliases"]
    )
    assert listed["claude-sonnet-4-5-20250929"].model_extra["alias_of"] == "claude-sonnet-4.5"
    retrieved = oai.models.retrieve("claude-sonnet-4-5-20250929")
    assert retrieved.id == "claude-sonnet-4-5-20250929" and retrieved.model_extra["alias_of"] == "claude-sonnet-4.5"
    assert oai.models.retrieve("claude-sonnet-4.5").model_extra.get("alias_of") is None
    with pytest.raises(openai.NotFoundError):
        oai.models.retrieve("no-such-model")


def test_responses_api_with_the_codex_default_model_is_served_by_the_newest_gpt_with_fallback(fallback):
    _, oai, _ = fallback
    response = oai.responses.create(model="gpt-7.1-nova", input="Say hi", max_output_tokens=30)
    assert response.model == "gpt-5" and response.output_text
