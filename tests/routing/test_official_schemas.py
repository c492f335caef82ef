"""Every answer and every streamed event validates against the official SDKs' own types, whichever
dialect served it: a matrix of offerings (each upstream dialect the simulated fleet speaks, and each
usage shape of its OpenAI-dialect providers) x the three caller endpoints x whole and streamed, each
with a plain answer, a tool call, reasoning and structured output where the offering declares them.

The types: openai's ``ChatCompletion`` and ``ChatCompletionChunk`` (``/v1/chat/completions``),
``Response`` and the ``ResponseStreamEvent`` union (``/v1/responses``); anthropic's ``Message`` and the
``RawMessageStreamEvent`` union (``/v1/messages``; a ``ping`` event is ``{"type": "ping"}``). What
"strict" checks is written in tests/routing/official_types.py: pydantic's strict mode on the JSON text
(types, literals, required fields, ``null`` only where the type is ``Optional``, unions resolved by
``type``), and the fields OpenAI's reference requires though they may be ``null`` present. Fields the
types do not declare are allowed, as the SDKs allow them.

A stream is also read the way the SDKs' own stream helpers read it: each event's SSE name is its
``type`` (the Anthropic SDK drops an event whose name it does not know), Responses sequence numbers
count from 0, and the helpers that assemble a stream (``ChatCompletionStreamState``, the Responses
stream state, Anthropic's ``accumulate_event``) take every event without raising. What the answer (or
the assembled stream) says, read through the SDK's objects, is what was asked: the tool call the prompt
names, an instance of the requested schema, reasoning where the offering shows it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import anthropic.types as A
import openai.types.chat as C
import openai.types.responses as R
import pytest
import requests
from anthropic.lib.streaming._messages import accumulate_event
from openai import omit
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.lib.streaming.responses._responses import ResponseStreamState

from sim.fleet_spec import load_catalog
from tests.routing.conftest import data_redis, ready_gateway
from tests.routing.harness import ServerThread, make_tenant
from tests.routing.official_types import check, sse_events, validated

Body = dict[str, Any]

# (model, provider): what each adds to the matrix
OFFERINGS = [
    ("gpt-4.1-mini", "openai"),  # OpenAI dialect, OpenAI usage
    ("gpt-5", "openai"),  # hidden reasoning: counted in the usage, not sent
    ("deepseek-r1", "deepseek"),  # DeepSeek usage, reasoning_content, no tools
    ("deepseek-v4-flash", "deepseek"),  # DeepSeek usage with tools
    ("kimi-k2", "moonshot"),  # Moonshot: stream usage inside the finishing choice
    ("glm-4.6", "zhipu"),  # Zhipu: stream usage on the finishing chunk, none after
    ("qwen3-coder-plus", "dashscope"),  # Qwen usage (cache writes in prompt_tokens_details)
    ("minimax-m2", "minimax"),  # reasons by default, reasoning_content
    ("gpt-5", "openrouter"),  # OpenRouter: usage.cost and is_byok
    ("claude-haiku-4.5", "anthropic"),  # Anthropic dialect, thinking
    ("deepseek-v4-flash", "deepseek-anthropic"),  # Anthropic dialect of another provider
    ("kimi-k2", "moonshot-anthropic"),
]
SHOWS_REASONING = {("deepseek-r1", "deepseek"), ("minimax-m2", "minimax"), ("claude-haiku-4.5", "anthropic")}
WEATHER_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "celsius": {"type": "integer"}},
    "required": ["city", "celsius"],
    "additionalProperties": False,
}
CALL = 'Call the tool get_weather with {"city": "Oslo"}'


def _parameters(model: str, provider: str) -> tuple[str, frozenset[str]]:
    spec = load_catalog()[provider]
    [offering] = [o for o in spec.offerings if o.model == model]
    return spec.dialect, frozenset(offering.parameters)


@dataclass(frozen=True)
class Endpoint:
    path: str
    whole: Any  # the SDK type of a whole answer
    event: Any  # the SDK type of one streamed event
    variants: Callable[[str, frozenset[str], bool], dict[str, Body]]  # (upstream dialect, parameters, stream)


def _chat(dialect: str, parameters: frozenset[str], stream: bool) -> dict[str, Body]:
    base: Body = {"messages": [{"role": "user", "content": "Say hi"}], "max_tokens": 512}
    usage: Body = {"stream_options": {"include_usage": True}} if stream else {}
    tool = {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER_SCHEMA}}
    out = {"text": base}
    if "tools" in parameters:
        out["tool"] = base | usage | {"messages": [{"role": "user", "content": CALL}], "tools": [tool]}
        out["tool"]["tool_choice"] = "required"
    if "reasoning" in parameters:
        out["reasoning"] = base | usage | {"reasoning_effort": "low", "max_tokens": 4096}
    if "json_mode" in parameters or dialect == "anthropic":
        schema = {"name": "weather", "schema": ANSWER_SCHEMA, "strict": True}
        out["json"] = base | usage | {"response_format": {"type": "json_schema", "json_schema": schema}}
    return out


def _responses(dialect: str, parameters: frozenset[str], stream: bool) -> dict[str, Body]:
    base: Body = {"input": "Say hi", "instructions": "Be brief.", "max_output_tokens": 512}
    out = {"text": base}
    if "tools" in parameters:
        tool = {"type": "function", "name": "get_weather", "parameters": WEATHER_SCHEMA}  # strict unsaid
        out["tool"] = base | {"input": CALL, "tools": [tool], "tool_choice": "required"}
    if "reasoning" in parameters:
        out["reasoning"] = base | {"reasoning": {"effort": "low"}, "max_output_tokens": 4096}
    if "json_mode" in parameters or dialect == "anthropic":
        text_format = {"type": "json_schema", "name": "weather", "schema": ANSWER_SCHEMA, "strict": True}
        out["json"] = base | {"text": {"format": text_format}}
    return out


def _messages(dialect: str, parameters: frozenset[str], stream: bool) -> dict[str, Body]:
    base: Body = {"messages": [{"role": "user", "content": "Say hi"}], "max_tokens": 512}
    out = {"text": base}
    if "tools" in parameters:
        tool = {"name": "get_weather", "input_schema": WEATHER_SCHEMA}
        out["tool"] = base | {"messages": [{"role": "user", "content": CALL}], "tools": [tool]}
        out["tool"]["tool_choice"] = {"type": "any"}
    if "reasoning" in parameters:
        out["reasoning"] = base | {"thinking": {"type": "enabled", "budget_tokens": 1024}, "max_tokens": 2048}
    if "json_mode" in parameters or dialect == "anthropic":
        out["json"] = base | {"output_config": {"format": {"type": "json_schema", "schema": ANSWER_SCHEMA}}}
    return out


ENDPOINTS = {
    "chat": Endpoint("/v1/chat/completions", C.ChatCompletion, C.ChatCompletionChunk, _chat),
    "responses": Endpoint("/v1/responses", R.Response, R.ResponseStreamEvent, _responses),
    "messages": Endpoint("/v1/messages", A.Message, A.RawMessageStreamEvent, _messages),
}


def _read_whole(endpoint: Endpoint, body: bytes) -> tuple[list[str], Any]:
    problems = check(endpoint.whole, body)
    return problems, None if problems else validated(endpoint.whole, body)


def _read_stream(name: str, endpoint: Endpoint, body: bytes) -> tuple[list[str], Any]:
    """What is wrong with the stream's events, and the answer the SDK's stream helper made of them."""
    problems: list[str] = []
    frames = []
    for number, (event_name, data) in enumerate(sse_events(body)):
        if data == b"[DONE]" and name == "chat":
            continue
        kind = json.loads(data).get("type")
        where = f"event {number} ({kind or 'chunk'})"
        if name != "chat" and event_name != kind:
            problems.append(f"{where}: its SSE name is {event_name!r}")
        if kind == "ping":
            problems += [f"{where}: {data!r} is not a ping"] if json.loads(data) != {"type": "ping"} else []
            continue
        found = check(endpoint.event, data)
        problems += [f"{where}: {p}" for p in found]
        if not found:
            frames.append(validated(endpoint.event, data))
    if problems:
        return problems, None
    try:
        return [], _assembled(name, frames)
    except (AssertionError, RuntimeError, ValueError, TypeError, KeyError, IndexError) as exc:
        return [f"the SDK's stream helper refused the stream: {type(exc).__name__}: {exc}"], None


def _assembled(name: str, frames: list[Any]) -> Any:
    """The answer the SDKs' own stream helpers assemble from the events (they raise on a bad sequence)."""
    if name == "chat":
        chat = ChatCompletionStreamState()
        for chunk in frames:
            chat.handle_chunk(chunk)
        return chat.get_final_completion()
    if name == "responses":
        assert [f.sequence_number for f in frames] == list(range(len(frames))), "sequence numbers"
        state = ResponseStreamState(input_tools=omit, text_format=omit)
        for event in frames:
            state.handle_event(event)
        return frames[-1].response
    snapshot, json_bufs = None, dict[int, bytes]()
    for event in frames:
        snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=json_bufs)
    return snapshot


@dataclass(frozen=True)
class Said:
    text: str
    calls: list[tuple[str, Any]]  # (name, arguments)
    reasoning: str


def _said(name: str, answer: Any) -> Said:
    """What the answer says, read from the SDK's object."""
    if name == "chat":
        message = answer.choices[0].message
        calls = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or ()]
        return Said(message.content or "", calls, (message.model_extra or {}).get("reasoning_content") or "")
    if name == "responses":
        items = [i for i in answer.output if i.type == "function_call"]
        parts = [part.text for i in answer.output if i.type == "reasoning" for part in i.content or ()]
        return Said(answer.output_text, [(i.name, json.loads(i.arguments)) for i in items], "".join(parts))
    text = "".join(block.text for block in answer.content if block.type == "text")
    thoughts = "".join(block.thinking for block in answer.content if block.type == "thinking")
    return Said(text, [(block.name, block.input) for block in answer.content if block.type == "tool_use"], thoughts)


def _carries(variant: str, said: Said, *, reasons: bool) -> list[str]:
    """A tool variant's answer is the call asked for; a structured one is an instance of the schema; an
    offering that shows its reasoning shows it in the caller's shape."""
    if variant == "tool" and said.calls != [("get_weather", {"city": "Oslo"})]:
        return [f"the answer's tool calls are {said.calls}"]
    if variant == "reasoning" and reasons and not said.reasoning:
        return ["the answer shows no reasoning"]
    if variant == "json":
        try:
            value = json.loads(said.text)
        except ValueError:
            return [f"the structured answer is not JSON: {said.text[:120]!r}"]
        if not (isinstance(value, dict) and sorted(value) == ["celsius", "city"]):
            return [f"the structured answer is not an instance of the schema: {said.text[:120]!r}"]
    return []


@pytest.fixture(scope="module")
def served(gateway_server: ServerThread, sim: Any) -> Iterator[tuple[str, str]]:
    """(gateway URL, API key): one gateway state for the whole matrix, which reads and never changes it
    (the per-test ``gateway`` fixture would republish the catalog 72 times)."""
    client = data_redis()
    client.flushdb()
    ready_gateway(gateway_server, sim, client)
    yield gateway_server.base_url, make_tenant(client).key
    client.flushdb()
    client.close()


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("name", list(ENDPOINTS))
@pytest.mark.parametrize(("model", "provider"), OFFERINGS, ids=[f"{m}@{p}" for m, p in OFFERINGS])
def test_answers_validate_against_the_official_sdk_types(served, model, provider, name, stream):
    base_url, key = served
    endpoint = ENDPOINTS[name]
    dialect, parameters = _parameters(model, provider)
    headers = {"authorization": f"Bearer {key}", "content-type": "application/json"}
    problems: list[str] = []
    for variant, extra in endpoint.variants(dialect, parameters, stream).items():
        body = {"model": model, "provider": {"only": [provider]}, "stream": stream, **extra}
        response = requests.post(f"{base_url}{endpoint.path}", json=body, headers=headers, timeout=20)
        assert response.status_code == 200, f"{variant}: {response.text[:500]}"
        assert response.headers["x-tokenway-provider"] == provider
        found, answer = (
            _read_stream(name, endpoint, response.content) if stream else _read_whole(endpoint, response.content)
        )
        if answer is not None:
            found += _carries(variant, _said(name, answer), reasons=(model, provider) in SHOWS_REASONING)
        problems += [f"{variant}: {p}" for p in found]
    assert not problems, "\n".join(problems)
