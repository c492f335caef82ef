"""Anthropic Messages requests: validation with Anthropic's messages, then the neutral Prompt."""

from __future__ import annotations

from typing import Any

from sim import errors as e
from sim.errors import SimError
from sim.prompt import Prompt, ToolSpec, add_message, add_value, text_of

MAX_BREAKPOINTS = 4


def _invalid(message: str) -> SimError:
    return SimError(e.INVALID, message)


def _tools(raw: Any) -> list[ToolSpec]:
    if not isinstance(raw, list):
        raise _invalid("tools: Input should be a valid list")
    specs = []
    for index, tool in enumerate(raw):
        if not isinstance(tool, dict):
            raise _invalid(f"tools.{index}: Input should be a valid dictionary")
        if tool.get("type") not in (None, "custom"):
            continue  # server tools (web_search_..., bash_...) carry no schema
        if not isinstance(tool.get("name"), str):
            raise _invalid(f"tools.{index}.custom.name: Field required")
        schema = tool.get("input_schema")
        if not isinstance(schema, dict):
            raise _invalid(f"tools.{index}.custom.input_schema: Field required")
        if schema.get("type") != "object":
            raise _invalid(f"tools.{index}.custom.input_schema.type: Input should be 'object'")
        specs.append(ToolSpec(name=tool["name"], schema=schema))
    return specs


def _tool_choice(raw: Any) -> str:
    if not isinstance(raw, dict):
        return "auto"
    kind = raw.get("type")
    if kind == "tool":
        return str(raw.get("name"))
    return {"any": "required", "none": "none"}.get(str(kind), "auto")


def _check_roles(messages: list[Any]) -> None:
    previous = None
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise _invalid(f"messages.{index}: Input should be a valid dictionary")
        role = message.get("role")
        if role == "system":
            raise _invalid(
                'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.'
            )
        if role not in ("user", "assistant"):
            raise _invalid(f"messages.{index}.role: Input should be 'user' or 'assistant'")
        if "content" not in message:
            raise _invalid(f"messages.{index}.content: Field required")
        if role == previous:
            raise _invalid(
                f'messages: roles must alternate between "user" and "assistant", but found multiple "{role}" roles in a row'
            )
        previous = role
    if messages and messages[0].get("role") != "user":
        raise _invalid('messages: first message must use the "user" role')


def _count_breakpoints(body: dict[str, Any]) -> int:
    blocks: list[Any] = list(body.get("tools") or [])
    system = body.get("system")
    if isinstance(system, list):
        blocks += system
    for message in body.get("messages") or []:
        if isinstance(message, dict) and isinstance(message.get("content"), list):
            blocks += message["content"]
    return sum(1 for block in blocks if isinstance(block, dict) and block.get("cache_control"))


def _thinking(body: dict[str, Any], max_tokens: int) -> bool | None:
    thinking = body.get("thinking")
    if not isinstance(thinking, dict) or thinking.get("type") != "enabled":
        return False if isinstance(thinking, dict) else None
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or budget < 1024:
        raise _invalid("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
    if budget >= max_tokens:
        raise _invalid(
            "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size"
        )
    return True


def _output_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    """Structured outputs (``output_config.format``, or the beta's ``output_format``): the answer's schema."""
    config = body.get("output_config")
    fmt = config.get("format") if isinstance(config, dict) else body.get("output_format")
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema":
        return None
    schema = fmt.get("schema")
    return schema if isinstance(schema, dict) else None


def _build(body: dict[str, Any], messages: list[Any]) -> Prompt:
    prompt = Prompt(stream=bool(body.get("stream")))
    tools = body.get("tools")
    if tools:
        prompt.tools = _tools(tools)
        ttl = next(
            (
                str(t["cache_control"].get("ttl") or "5m")
                for t in reversed(tools)
                if isinstance(t, dict) and isinstance(t.get("cache_control"), dict)
            ),
            None,
        )
        add_value(prompt, b"tools", tools, ttl)
    system = body.get("system")
    if system:
        add_message(prompt, "system", system, {"system": True})
    for message in messages:
        add_message(prompt, message["role"], message["content"], {"role": message["role"]})
    prompt.tool_choice = _tool_choice(body.get("tool_choice"))
    last = messages[-1] if messages else {}
    content = last.get("content")
    prompt.after_tool_result = isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )
    prompt.last_user_text = next((text_of(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
    return prompt


def parse(body: Any, *, count_only: bool = False) -> tuple[str, Prompt]:
    if not isinstance(body, dict):
        raise _invalid("Input should be a valid dictionary")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _invalid("model: Field required")
    max_tokens = body.get("max_tokens")
    if not count_only and max_tokens is None:
        raise _invalid("max_tokens: Field required")
    if not count_only and (not isinstance(max_tokens, int) or max_tokens < 1):
        raise _invalid("max_tokens: Input should be greater than or equal to 1")
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise _invalid("messages: Field required")
    _check_roles(messages)
    found = _count_breakpoints(body)
    if found > MAX_BREAKPOINTS:
        raise _invalid(f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {found}.")
    prompt = _build(body, messages)
    prompt.max_tokens = max_tokens if isinstance(max_tokens, int) else None
    prompt.reasoning = _thinking(body, max_tokens) if isinstance(max_tokens, int) else None
    prompt.json_schema = _output_schema(body)  # answered as a text block holding an instance of it
    prompt.json_mode = prompt.json_schema is not None
    return model, prompt
