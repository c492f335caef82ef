"""Wire dialects the probes speak: request building, stream and response parsing, usage."""

from __future__ import annotations

from evaluation.wire.anthropic import AnthropicDialect
from evaluation.wire.base import Dialect
from evaluation.wire.openai import OpenAIDialect

_DIALECTS: dict[str, Dialect] = {"openai": OpenAIDialect(), "anthropic": AnthropicDialect()}


def dialect_for(name: str) -> Dialect:
    try:
        return _DIALECTS[name]
    except KeyError as exc:
        raise ValueError(f"unknown dialect {name!r}") from exc
