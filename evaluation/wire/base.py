"""What every wire dialect provides, and the dialect-neutral request and usage shapes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from contracts.provider_usage import read_tokens, usage_problem
from contracts.snapshot import OfferingSnapshot
from contracts.usage import Tokens


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
    """The provider's usage as billing reads it (contracts.provider_usage), and its reported cost."""

    tokens: Tokens = field(default_factory=Tokens)
    cost_micros: int | None = None  # when the provider reports a cost

    @property
    def input_total(self) -> int:  # every input token, cache reads and writes included
        return self.tokens.input_total

    @property
    def cached(self) -> int:  # cache reads
        return self.tokens.cache_read

    @property
    def output(self) -> int:  # reasoning included
        return self.tokens.output


def _reported_cost(raw: dict[str, Any]) -> int | None:
    """Some providers report the request's cost; we accept micro-units or a USD number."""
    if isinstance(raw.get("cost_micros"), int):
        return int(raw["cost_micros"])
    cost = raw.get("cost")
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        return round(float(cost) * 1_000_000)
    return None


def read_usage(offering: OfferingSnapshot, raw: Any) -> Usage:
    """The same reading the gateway bills with; a malformed or inconsistent usage is a WireError."""
    problem = usage_problem(offering.usage_dialect, raw)
    if problem:
        raise WireError(problem)
    tokens, flags = read_tokens(offering.usage_dialect, raw, cached_in_input=offering.cached_tokens_in_input)
    if "clamped_cache_read" in flags:
        raise WireError(f"cached tokens exceed input tokens {raw.get('prompt_tokens')}")
    return Usage(tokens, _reported_cost(raw))


@dataclass(slots=True)
class Reply:
    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: Usage | None = None
    finish_reason: str | None = None


@dataclass(slots=True)
class StreamDelta:
    text: str = ""  # answer text
    reasoning: str = ""  # streamed reasoning text (reasoning_content, reasoning, thinking blocks)
    usage: dict[str, Any] | None = None  # raw usage fragment, merged by the caller
    done: bool = False
    finish_reason: str | None = None


class Dialect(Protocol):
    name: str

    def build(
        self, offering: OfferingSnapshot, request: ChatRequest, api_key: str
    ) -> tuple[str, dict[str, str], dict[str, Any]]:
        """URL, headers and JSON body of the request."""
        ...

    def stream_delta(self, event: str, data: dict[str, Any]) -> StreamDelta: ...

    def parse_reply(self, data: dict[str, Any]) -> Reply: ...

    def usage(self, offering: OfferingSnapshot, raw: dict[str, Any]) -> Usage: ...
