"""LangChain's chat models (the variants in argv: ``openai`` for ChatOpenAI on chat completions, ``anthropic`` for
ChatAnthropic on the Messages API): a stream, a tool round trip (bind_tools, then the ToolMessage back), with_structured_output
into a pydantic model; for each target offering."""

from __future__ import annotations

import functools
from typing import Any

from client_common import BASE_URL, KEY, STREAM_PROMPT, STRUCTURED_PROMPT, TOOL_PROMPT, TOOL_RESULT, Weather, run
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool


@tool
def get_weather(city: str) -> str:
    """The current weather in a city."""
    return TOOL_RESULT


def model(dialect: str, target: dict[str, Any], max_tokens: int) -> Any:
    pinned = {"provider": target["provider"]}
    if dialect == "anthropic":
        from langchain_anthropic import ChatAnthropic

        return ChatAnthropic(
            model=target["model"],
            base_url=BASE_URL,
            api_key=KEY,
            max_retries=0,
            max_tokens=max_tokens,
            model_kwargs={"extra_body": pinned},
        )
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=target["model"],
        base_url=f"{BASE_URL}/v1",
        api_key=KEY,
        max_retries=0,
        max_tokens=max_tokens,
        extra_body=pinned,
        stream_usage=True,
    )


def stream(dialect: str, target: dict[str, Any]) -> dict[str, Any]:
    chunks = list(model(dialect, target, 128).stream(STREAM_PROMPT))
    texts = [c.text for c in chunks if c.text]
    whole = chunks[0]
    for chunk in chunks[1:]:
        whole += chunk
    usage = whole.usage_metadata or {}
    return {
        "chunks": len(texts),
        "text": "".join(texts),
        "input_tokens": usage.get("input_tokens"),
        "output_tokens": usage.get("output_tokens"),
    }


def tools(dialect: str, target: dict[str, Any]) -> dict[str, Any]:
    bound = model(dialect, target, 256).bind_tools([get_weather])
    messages: list[BaseMessage] = [HumanMessage(TOOL_PROMPT)]
    first = bound.invoke(messages)
    call = first.tool_calls[0]
    messages += [first, ToolMessage(get_weather.invoke(call["args"]), tool_call_id=call["id"])]
    second = bound.invoke(messages)
    return {
        "tool": call["name"],
        "arguments": call["args"],
        "first_finish": _finish(first),
        "answer": second.text,
        "finish": _finish(second),
    }


def _finish(message: Any) -> str:
    meta = message.response_metadata
    return str(meta.get("finish_reason") or meta.get("stop_reason"))


def structured(dialect: str, target: dict[str, Any]) -> dict[str, Any]:
    answer = model(dialect, target, 512).with_structured_output(Weather, method="json_schema").invoke(STRUCTURED_PROMPT)
    return {"parsed": answer.model_dump(), "valid": isinstance(answer, Weather)}


CASES = {"stream": stream, "tools": tools, "structured": structured}
run(lambda dialect: {name: functools.partial(case, dialect) for name, case in CASES.items()})
