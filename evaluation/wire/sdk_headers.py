"""Headers the official Python SDKs send, so probe traffic looks like customer traffic (anti-gaming)."""

from __future__ import annotations

# Versions of the SDKs our customers use most; bump with requirements/dev.in's openai/anthropic pins.
OPENAI_SDK_VERSION = "1.82.0"
ANTHROPIC_SDK_VERSION = "0.52.0"
_PYTHON_VERSION = "3.11.9"


def _stainless(version: str) -> dict[str, str]:
    return {
        "Accept": "application/json",
        "Content-Type": "application/json",
        "X-Stainless-Lang": "python",
        "X-Stainless-Package-Version": version,
        "X-Stainless-OS": "Linux",
        "X-Stainless-Arch": "x64",
        "X-Stainless-Runtime": "CPython",
        "X-Stainless-Runtime-Version": _PYTHON_VERSION,
        "x-stainless-retry-count": "0",
        "x-stainless-read-timeout": "600",
    }


def openai_headers(api_key: str) -> dict[str, str]:
    return {
        **_stainless(OPENAI_SDK_VERSION),
        "User-Agent": f"OpenAI/Python {OPENAI_SDK_VERSION}",
        "Authorization": f"Bearer {api_key}",
    }


def anthropic_headers(api_key: str) -> dict[str, str]:
    return {
        **_stainless(ANTHROPIC_SDK_VERSION),
        "User-Agent": f"Anthropic/Python {ANTHROPIC_SDK_VERSION}",
        "x-api-key": api_key,
        "anthropic-version": "2023-06-01",
    }
