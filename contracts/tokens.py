"""The one token-count approximation used by the simulated fleet and the gateway's estimator.

Rule: every run of up to 4 ASCII characters is one token (ceil(ascii_chars / 4)),
and every non-ASCII character (CJK, emoji, accents) is one token. It is cheap
(no tokenizer, no model files), deterministic and within the same order as BPE
tokenizers for English and Chinese text.
"""

from __future__ import annotations

from typing import Any


def count_text_tokens(text: str) -> int:
    if not text:
        return 0
    if text.isascii():
        return (len(text) + 3) // 4
    ascii_chars = sum(1 for ch in text if ord(ch) < 128)
    return (ascii_chars + 3) // 4 + (len(text) - ascii_chars)


def count_value_tokens(value: Any) -> int:
    """Tokens of every string inside a JSON-like value (content blocks, tool schemas)."""
    if isinstance(value, str):
        return count_text_tokens(value)
    if isinstance(value, dict):
        return sum(count_value_tokens(item) for item in value.values())
    if isinstance(value, list):
        return sum(count_value_tokens(item) for item in value)
    return 0


# Each message costs this many tokens of framing (role markers), as chat templates do.
MESSAGE_OVERHEAD_TOKENS = 4
