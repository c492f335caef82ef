"""LiteLLM as a client (the variants in argv: ``openai`` for its OpenAI-compatible provider on chat completions,
``anthropic`` for its Anthropic provider on the Messages API): a stream, a tool round trip, and response_format with a pydantic
model (LiteLLM sends it as json_schema), validated here; for each target offering."""

from __future__ import annotations

import functools
import json
from typing import Any

import litellm
from client_common import BASE_URL, KEY, STREAM_PROMPT, STRUCTURED_PROMPT, TOOL_PROMPT, TOOL_RESULT, Weather, run

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The current weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def call(dialect: str, target: dict[str, Any], **body: Any) -> Any:
    base = BASE_URL if dialect == "anthropic" else f"{BASE_URL}/v1"
    return litellm.completion(
        model=f"{dialect}/{target['model']}",
        api_base=base,
        api_key=KEY,
        num_retries=0,
        extra_body={"provider": target["provider"]},
        **body,
    )


def stream(dialect: str, target: dict[str, Any]) -> dict[str, Any]:
    chunks = list(
        call(
            dialect,
            target,
            messages=[{"role": "user", "content": STREAM_PROMPT}],
            max_tokens=128,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    texts = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    usage = next((c.usage for c in reversed(chunks) if getattr(c, "usage", None)), None)
    return {
        "chunks": len(texts),
        "text": "".join(texts),
        "input_tokens": usage and usage.prompt_tokens,
        "output_tokens": usage and usage.completion_tokens,
    }


def tools(dialect: str, target: dict[str, Any]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": TOOL_PROMPT}]
    first = call(dialect, target, messages=messages, tools=[WEATHER_TOOL], max_tokens=256)
    tool_call = first.choices[0].message.tool_calls[0]
    messages += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": tool_call.id, "content": TOOL_RESULT},
    ]
    second = call(dialect, target, messages=messages, tools=[WEATHER_TOOL], max_tokens=256)
    return {
        "tool": tool_call.function.name,
        "arguments": json.loads(tool_call.function.arguments),
        "first_finish": first.choices[0].finish_reason,
        "answer": second.choices[0].message.content,
        "finish": second.choices[0].finish_reason,
    }


def structured(dialect: str, target: dict[str, Any]) -> dict[str, Any]:
    answer = call(
        dialect,
        target,
        messages=[{"role": "user", "content": STRUCTURED_PROMPT}],
        response_format=Weather,
        max_tokens=512,
    )
    parsed = Weather.model_validate_json(answer.choices[0].message.content)
    return {"parsed": parsed.model_dump(), "valid": True}


CASES = {"stream": stream, "tools": tools, "structured": structured}
run(lambda dialect: {name: functools.partial(case, dialect) for name, case in CASES.items()})
