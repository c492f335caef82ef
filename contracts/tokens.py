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


MAX_NESTING = 64  # deeper JSON is refused: no real request nests so far, and walking it must stay iterative


class TooDeeplyNested(ValueError):
    """A JSON value nests deeper than MAX_NESTING levels."""


def count_value_tokens(value: Any, *, max_depth: int = MAX_NESTING) -> int:
    """Tokens of every string inside a JSON-like value (content blocks, tool schemas).

    Iterative (an explicit stack), so a hostile 1,000-level body costs no recursion, only a refusal.
    """
    if isinstance(value, str):
        return count_text_tokens(value)
    total = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            total += count_text_tokens(item)
            continue
        if isinstance(item, dict):
            item = item.values()
        elif not isinstance(item, list):
            continue
        if depth >= max_depth:
            raise TooDeeplyNested(f"JSON nests deeper than {max_depth} levels")
        stack.extend((child, depth + 1) for child in item)
    return total


# Each message costs this many tokens of framing (role markers), as chat templates do.
MESSAGE_OVERHEAD_TOKENS = 4
