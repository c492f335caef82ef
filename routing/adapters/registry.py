"""Adapter per upstream dialect."""

from __future__ import annotations

from routing.adapters.anthropic import AnthropicAdapter
from routing.adapters.base import Adapter
from routing.adapters.openai import OpenAIAdapter

ADAPTERS: dict[str, Adapter] = {"openai": OpenAIAdapter(), "anthropic": AnthropicAdapter()}


def adapter_for(dialect: str) -> Adapter:
    return ADAPTERS[dialect]
