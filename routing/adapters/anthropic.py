"""Anthropic-compatible providers (first-party Anthropic and Messages-API compatible hosts)."""

from __future__ import annotations

from collections.abc import Mapping

from contracts.snapshot import OfferingSnapshot

DEFAULT_VERSION = "2023-06-01"


class AnthropicAdapter:
    dialect = "anthropic"

    def url(self, offering: OfferingSnapshot) -> str:
        return offering.base_url.rstrip("/") + "/messages"

    def headers(self, api_key: str, client: Mapping[str, str]) -> dict[str, str]:
        headers = {
            "x-api-key": api_key,
            "anthropic-version": client.get("anthropic-version") or DEFAULT_VERSION,
            "Content-Type": "application/json",
        }
        beta = client.get("anthropic-beta")
        if beta:
            headers["anthropic-beta"] = beta
        return headers
