"""Output tokens carried by each streamed piece, in the accounting the usage reports.

``contracts.tokens.count_text_tokens`` is not additive (4 ASCII characters a token,
rounded up), so counting pieces one by one overcounts. Each piece instead carries the
growth of the count of the text streamed so far: the pieces of a text always sum to
``count_text_tokens`` of the whole text, which is what the usage reports as output.
"""

from __future__ import annotations


def piece_tokens(pieces: list[str]) -> list[int]:
    """Tokens each piece adds to ``count_text_tokens("".join(pieces[:i + 1]))``."""
    ascii_chars = other = counted = 0
    out = []
    for piece in pieces:
        if piece.isascii():
            ascii_chars += len(piece)
        else:
            non_ascii = sum(1 for ch in piece if ord(ch) >= 128)
            ascii_chars += len(piece) - non_ascii
            other += non_ascii
        total = (ascii_chars + 3) // 4 + other
        out.append(total - counted)
        counted = total
    return out
