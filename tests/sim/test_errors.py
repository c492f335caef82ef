"""Bad input gets each provider's real status and error shape."""

from __future__ import annotations

import openai
import pytest

HI = [{"role": "user", "content": "hi"}]


def test_openai_missing_model(http):
    error = http.post("/openai/v1/chat/completions", json={"messages": HI}).json()["error"]
    assert error["message"] == "you must provide a model parameter" and error["type"] == "invalid_request_error"


def test_openai_bad_role_and_bad_tool_schema(oai):
    with oai("openai") as client:
        with pytest.raises(openai.BadRequestError) as bad_role:
            client.chat.completions.create(model="gpt-4.1", messages=[{"role": "robot", "content": "x"}])
        with pytest.raises(openai.BadRequestError) as bad_tool:
            client.chat.completions.create(
                model="gpt-4.1", messages=HI, tools=[{"type": "function", "function": {"parameters": {}}}]
            )
    assert bad_role.value.code == "invalid_value" and bad_role.value.param == "messages[0].role"
    assert bad_tool.value.code == "missing_required_parameter" and bad_tool.value.param == "tools[0].function.name"


def test_openai_context_length_exceeded(oai):
    with oai("openai") as client, pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="gpt-5", messages=[{"role": "user", "content": "word " * 400_000}])
    assert caught.value.code == "context_length_exceeded"


def test_invalid_json_body(http):
    response = http.post("/openai/v1/chat/completions", content=b"{nope", headers={"content-type": "application/json"})
    assert response.status_code == 400


@pytest.mark.parametrize(
    ("provider", "model", "check"),
    [
        ("zhipu", "glm-4.6", lambda body: body["error"]["code"] == "1261"),
        ("moonshot", "kimi-k2-0905-preview", lambda body: body["error"]["type"] == "invalid_request_error"),
        (
            "dashscope",
            "qwen-plus",
            lambda body: body["error"]["code"] == "invalid_parameter_error" and body["request_id"],
        ),
        ("volcengine", "doubao-seed-1-6-250615", lambda body: body["error"]["type"] == "BadRequest"),
        ("gemini", "gemini-2.5-flash", lambda body: body[0]["error"]["status"] == "INVALID_ARGUMENT"),
        ("minimax", "MiniMax-M2", lambda body: body["base_resp"]["status_code"] == 1039),
    ],
)
def test_provider_context_errors_use_their_own_shapes(http, provider, model, check):
    body = {"model": model, "messages": [{"role": "user", "content": "word " * 1_100_000}]}
    response = http.post(f"/{provider}/v1/chat/completions", json=body)
    assert response.status_code == 400
    assert check(response.json())


def test_require_auth_profile(tmp_path):
    import httpx2

    from sim.server import start_in_thread

    profiles = tmp_path / "p.yaml"
    profiles.write_text("defaults: {require_auth: true}\n")
    with start_in_thread(time_scale=0, profiles=profiles) as handle, httpx2.Client(base_url=handle.base_url) as client:
        refused = client.post("/openai/v1/chat/completions", json={"model": "gpt-4.1", "messages": HI})
        allowed = client.post(
            "/openai/v1/chat/completions",
            json={"model": "gpt-4.1", "messages": HI},
            headers={"Authorization": "Bearer any"},
        )
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "invalid_api_key"
    assert allowed.status_code == 200
