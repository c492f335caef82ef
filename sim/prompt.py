"""The dialect-neutral view of a request's prompt: cache segments, token count, task text.

A segment is one content block (or a whole string content, or the tool list). Each has
two key materials: ``norm`` (content only: no cache_control, string == single text block,
the Claude Code billing block replaced by a constant) and ``raw`` (the block's JSON bytes
as received, with the message envelope on its first block). Tokens follow contracts.tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from contracts.tokens import MESSAGE_OVERHEAD_TOKENS, count_text_tokens, count_value_tokens

BILLING_PREFIX = "x-anthropic-billing-header:"
_SORTED = orjson.OPT_SORT_KEYS


@dataclass(slots=True)
class Segment:
    norm: bytes
    raw: bytes
    tokens: int
    ttl: str | None = None  # set when the block carries a cache_control breakpoint


@dataclass(slots=True)
class ToolSpec:
    name: str
    schema: dict[str, Any]


@dataclass(slots=True)
class Prompt:
    segments: list[Segment] = field(default_factory=list)
    tokens: int = 0
    last_user_text: str = ""
    after_tool_result: bool = False
    tools: list[ToolSpec] = field(default_factory=list)
    tool_choice: str = "auto"  # auto | none | required | <tool name>
    json_mode: bool = False
    json_schema: dict[str, Any] | None = None  # response_format json_schema: the answer is an instance of it
    max_tokens: int | None = None
    stream: bool = False
    reasoning: bool | None = None  # None: the profile decides
    breakpoints: int = 0

    def add(self, segment: Segment) -> None:
        self.segments.append(segment)
        self.tokens += segment.tokens
        if segment.ttl:
            self.breakpoints += 1


def _ttl(block: dict[str, Any]) -> str | None:
    control = block.get("cache_control")
    if not isinstance(control, dict):
        return None
    return str(control.get("ttl") or "5m")


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _block_segment(role: bytes, block: Any, envelope: bytes) -> Segment:
    raw = envelope + orjson.dumps(block)
    if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
        text = block["text"]
        norm = b"billing" if text.startswith(BILLING_PREFIX) else b"T" + role + text.encode()
        return Segment(norm=norm, raw=raw, tokens=count_text_tokens(text), ttl=_ttl(block))
    if not isinstance(block, dict):
        return Segment(norm=b"V" + role + orjson.dumps(block), raw=raw, tokens=count_value_tokens(block))
    stripped = {key: value for key, value in block.items() if key != "cache_control"}
    return Segment(
        norm=b"B" + role + orjson.dumps(stripped, option=_SORTED),
        raw=raw,
        tokens=count_value_tokens(stripped),
        ttl=_ttl(block),
    )


def add_message(prompt: Prompt, role: str, content: Any, envelope: dict[str, Any]) -> None:
    """Append one message's segments; the first carries the per-message overhead."""
    role_bytes = role.encode() + b"\x00"
    envelope_bytes = orjson.dumps(envelope)
    if isinstance(content, list) and content:
        segments = [
            _block_segment(role_bytes, block, envelope_bytes if i == 0 else b"") for i, block in enumerate(content)
        ]
    elif isinstance(content, str):
        text = content
        norm = b"billing" if text.startswith(BILLING_PREFIX) else b"T" + role_bytes + text.encode()
        segments = [Segment(norm=norm, raw=envelope_bytes + orjson.dumps(text), tokens=count_text_tokens(text))]
    else:
        segments = [Segment(norm=b"E" + role_bytes, raw=envelope_bytes, tokens=0)]
    segments[0].tokens += MESSAGE_OVERHEAD_TOKENS
    for segment in segments:
        prompt.add(segment)


def add_value(prompt: Prompt, tag: bytes, value: Any, ttl: str | None = None) -> None:
    """A whole JSON value as one segment (tool list, assistant tool calls)."""
    stripped = [_without_cache_control(item) for item in value] if isinstance(value, list) else value
    prompt.add(
        Segment(
            norm=tag + orjson.dumps(stripped, option=_SORTED),
            raw=tag + orjson.dumps(value),
            tokens=count_value_tokens(stripped),
            ttl=ttl,
        )
    )


def _without_cache_control(item: Any) -> Any:
    if isinstance(item, dict) and "cache_control" in item:
        return {key: value for key, value in item.items() if key != "cache_control"}
    return item
