"""OpenAI Chat Completions requests: validation with OpenAI's messages, then the neutral Prompt."""

from __future__ import annotations

import re
from typing import Any

from sim import errors as e
from sim.errors import SimError
from sim.prompt import Prompt, ToolSpec, add_message, add_value, text_of

ROLES = ("system", "developer", "user", "assistant", "tool", "function")
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _invalid(message: str, param: str | None = None, code: str | None = None) -> SimError:
    return SimError(e.INVALID, message, param=param, code=code)


def _missing(param: str) -> SimError:
    return _invalid(f"Missing required parameter: '{param}'.", param, "missing_required_parameter")


def _tools(raw: Any) -> list[ToolSpec]:
    if not isinstance(raw, list):
        raise _invalid(
            "Invalid type for 'tools': expected an array, but got an object instead.", "tools", "invalid_type"
        )
    specs = []
    for index, tool in enumerate(raw):
        where = f"tools[{index}]"
        if not isinstance(tool, dict) or tool.get("type") != "function":
            raise _invalid(f"Invalid value for '{where}.type': expected 'function'.", f"{where}.type", "invalid_value")
        function = tool.get("function")
        if not isinstance(function, dict):
            raise _missing(f"{where}.function")
        name = function.get("name")
        if not isinstance(name, str):
            raise _missing(f"{where}.function.name")
        if not _TOOL_NAME.match(name):
            raise _invalid(
                f"Invalid '{where}.function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                f"{where}.function.name",
                "invalid_value",
            )
        schema = function.get("parameters", {"type": "object", "properties": {}})
        if not isinstance(schema, dict) or schema.get("type", "object") != "object":
            raise _invalid(
                f"Invalid schema for function '{name}': schema must be a JSON Schema of 'type: \"object\"', got 'type: \"{schema.get('type') if isinstance(schema, dict) else schema}\"'.",
                f"{where}.function.parameters",
                "invalid_function_parameters",
            )
        specs.append(ToolSpec(name=name, schema=schema))
    return specs


def _tool_choice(raw: Any) -> str:
    if raw is None:
        return "auto"
    if isinstance(raw, str) and raw in ("auto", "none", "required"):
        return raw
    if isinstance(raw, dict) and isinstance(raw.get("function"), dict) and raw["function"].get("name"):
        return str(raw["function"]["name"])
    raise _invalid(
        "Invalid value for 'tool_choice': expected 'none', 'auto', 'required' or a named function.",
        "tool_choice",
        "invalid_value",
    )


def _message(prompt: Prompt, index: int, message: Any) -> None:
    if not isinstance(message, dict):
        raise _invalid(
            f"Invalid type for 'messages[{index}]': expected an object, but got a string instead.",
            f"messages[{index}]",
            "invalid_type",
        )
    role = message.get("role")
    if role is None:
        raise _missing(f"messages[{index}].role")
    if role not in ROLES:
        raise _invalid(
            f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.",
            f"messages[{index}].role",
            "invalid_value",
        )
    if role == "tool" and not message.get("tool_call_id"):
        raise _invalid(
            "Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'.",
            f"messages[{index}].tool_call_id",
            "missing_required_parameter",
        )
    content = message.get("content")
    if content is None and not (role == "assistant" and message.get("tool_calls")):
        raise _missing(f"messages[{index}].content")
    envelope = {key: value for key, value in message.items() if key not in ("content", "tool_calls")}
    add_message(prompt, role, content, envelope)
    if message.get("tool_calls"):
        add_value(prompt, b"calls", message["tool_calls"])


def parse(body: Any) -> tuple[str, Prompt]:
    if not isinstance(body, dict):
        raise _invalid(
            "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)"
        )
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _invalid("you must provide a model parameter")
    messages = body.get("messages")
    if messages is None:
        raise _missing("messages")
    if not isinstance(messages, list) or not messages:
        raise _invalid(
            "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
            "messages",
            "empty_array",
        )
    if body.get("stream_options") is not None and not body.get("stream"):
        raise _invalid(
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
            "stream_options",
            "invalid_value",
        )
    prompt = Prompt(stream=bool(body.get("stream")))
    if body.get("tools"):
        prompt.tools = _tools(body["tools"])
        add_value(prompt, b"tools", body["tools"])
    prompt.tool_choice = _tool_choice(body.get("tool_choice"))
    for index, message in enumerate(messages):
        _message(prompt, index, message)
    last = messages[-1]
    prompt.after_tool_result = last.get("role") in ("tool", "function")
    prompt.last_user_text = next((text_of(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
    response_format = body.get("response_format")
    prompt.json_mode = isinstance(response_format, dict) and response_format.get("type") in (
        "json_object",
        "json_schema",
    )
    if prompt.json_mode and isinstance(response_format, dict):
        schema = (response_format.get("json_schema") or {}).get("schema")
        prompt.json_schema = schema if isinstance(schema, dict) else None
    max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 1):
        raise _invalid(
            f"Invalid 'max_tokens': integer below minimum value. Expected a value >= 1, but got {max_tokens} instead.",
            "max_tokens",
            "integer_below_min_value",
        )
    prompt.max_tokens = max_tokens
    return model, prompt


def include_usage(body: dict[str, Any]) -> bool:
    options = body.get("stream_options")
    return isinstance(options, dict) and bool(options.get("include_usage"))
