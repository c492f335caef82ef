"""OpenAI-compatible providers (OpenAI, DeepSeek, Moonshot, Zhipu, Qwen, ...)."""

from __future__ import annotations

from collections.abc import Mapping

from contracts.snapshot import OfferingSnapshot


class OpenAIAdapter:
    dialect = "openai"

    def url(self, offering: OfferingSnapshot) -> str:
        return offering.base_url.rstrip("/") + "/chat/completions"

    def headers(self, api_key: str, client: Mapping[str, str]) -> dict[str, str]:
        return {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}
