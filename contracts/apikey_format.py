"""API key format: ``tw_live_`` / ``tw_test_`` + 43 base62 chars (32 random bytes) + 6-char checksum.

The checksum (CRC32 of prefix + body, base62, zero-padded) lets the gateway refuse
mistyped or made-up keys without any lookup. Keys are stored only as
HMAC-SHA256(pepper, key) and compared in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import zlib

ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
PREFIXES = ("tw_live_", "tw_test_")
BODY_LEN = 43  # 62**43 > 2**256
CHECKSUM_LEN = 6
KEY_LEN = len(PREFIXES[0]) + BODY_LEN + CHECKSUM_LEN
_ALLOWED = frozenset(ALPHABET)


def _base62(number: int, width: int) -> str:
    chars = []
    while number:
        number, rem = divmod(number, 62)
        chars.append(ALPHABET[rem])
    return "".join(reversed(chars)).rjust(width, "0")


def _checksum(prefix_and_body: str) -> str:
    return _base62(zlib.crc32(prefix_and_body.encode()), CHECKSUM_LEN)


def generate_key(*, live: bool = True) -> str:
    prefix = PREFIXES[0] if live else PREFIXES[1]
    body = _base62(int.from_bytes(secrets.token_bytes(32), "big"), BODY_LEN)
    return prefix + body + _checksum(prefix + body)


def is_well_formed(key: str) -> bool:
    """Shape and checksum only; no lookup. Safe on any attacker-supplied string."""
    if len(key) != KEY_LEN or not key.startswith(PREFIXES):
        return False
    rest = key[len(PREFIXES[0]) :]
    if not _ALLOWED.issuperset(rest):
        return False
    body, check = rest[:BODY_LEN], rest[BODY_LEN:]
    return hmac.compare_digest(_checksum(key[: len(PREFIXES[0])] + body), check)


def hash_key(key: str, pepper: str) -> str:
    return hmac.new(pepper.encode(), key.encode(), hashlib.sha256).hexdigest()


def display_prefix(key: str) -> str:
    """What may be shown after creation: the mode prefix plus 4 chars."""
    return key[: len(PREFIXES[0]) + 4]


def last_four(key: str) -> str:
    return key[-4:]
