"""What every wire dialect provides, and the dialect-neutral request and usage shapes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from contracts.snapshot import OfferingSnapshot


class WireError(Exception):
    """The provider's answer does not have the shape the dialect promises."""


@dataclass(frozen=True, slots=True)
class ChatRequest:
    system: tuple[str, ...]  # system blocks, in order (the billing block is one of them)
    messages: tuple[dict[str, str], ...]  # {"role": "user"|"assistant", "content": str}
    max_tokens: int
    stream: bool = True
    tools: bool = False  # offer one function tool and require calling it
    json_mode: bool = False
    cache_prefix: bool = False  # mark the system prompt as a cache breakpoint (Anthropic dialect)


@dataclass(frozen=True, slots=True)
class Usage:
    input_total: int  # every input token, cache reads and writes included
    cached: int  # cache reads
    cache_write: int
    output: int
    cost_micros: int | None = None  # when the provider reports a cost


@dataclass(slots=True)
class Reply:
    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: Usage | None = None
    finish_reason: str | None = None


@dataclass(slots=True)
class StreamDelta:
    text: str = ""
    usage: dict[str, Any] | None = None  # raw usage fragment, merged by the caller
    done: bool = False
    finish_reason: str | None = None


class Dialect(Protocol):
    name: str

    def build(
        self, target: OfferingSnapshot, request: ChatRequest, api_key: str
    ) -> tuple[str, dict[str, str], dict[str, Any]]:
        """URL, headers and JSON body of the request."""
        ...

    def stream_delta(self, event: str, data: dict[str, Any]) -> StreamDelta: ...

    def parse_reply(self, data: dict[str, Any]) -> Reply: ...

    def usage(self, target: OfferingSnapshot, raw: dict[str, Any]) -> Usage: ...
