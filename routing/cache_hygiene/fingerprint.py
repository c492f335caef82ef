"""Conversation fingerprint: hash of the normalised prefix that stays the same across turns.

System (billing block removed), tools and the first message, with ``cache_control``
ignored and a string equal to one text block, identify a conversation; later
turns only append. Used for cache affinity.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable
from functools import partial
from typing import Any

import orjson

from routing.cache_hygiene.billing import strip_openai_messages, strip_system
from routing.cache_hygiene.canonical import canonical_content, canonical_messages, canonical_system


def anthropic_fingerprint(body: dict[str, Any], tenant_id: int | None = None) -> str | None:
    """``tenant_id`` scopes the memo of large heads (below): without it nothing is remembered."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return None
    system, _ = strip_system(body.get("system"))
    parts = (canonical_system(system, mark_last=False), body.get("tools"), canonical_messages(messages[:1]))
    return _plain_digest(*parts) if tenant_id is None else _digest(tenant_id, *parts)


def openai_fingerprint(body: dict[str, Any], tenant_id: int | None = None) -> str | None:
    """``tenant_id`` scopes the memo of large heads (below): without it nothing is remembered."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return None
    head: list[Any] = []
    for message in messages:
        head.append(
            {**message, "content": canonical_content(message.get("content"))} if isinstance(message, dict) else message
        )
        if not isinstance(message, dict) or message.get("role") not in ("system", "developer"):
            break
    strip_openai_messages(head)
    tools = body.get("tools")
    if tenant_id is None:
        return _plain_digest(None, tools, head)
    if tools is None and all(isinstance(m, dict) and all(type(v) is str for v in m.values()) for m in head):
        # The common head (system prompt and first question, text only): remembered by its strings,
        # so a repeated head is neither serialised nor hashed. Equal keys are equal heads: equal digests.
        key = tuple(tuple(sorted(m.items())) for m in head)
        summary = (tenant_id, *((name, len(text), text[:SLICE], text[-SLICE:]) for m in key for name, text in m))
        size = sum(len(text) for m in key for _, text in m)
        return _memo.lookup(key, summary, size, partial(_plain_digest, None, None, head))
    return _digest(tenant_id, None, tools, head)


def keyed_fingerprint(tenant_id: int, model: str, cache_key: str) -> str:
    """The caller names its conversation (Responses ``prompt_cache_key``): scoped to the tenant and
    model, so two tenants' equal keys never share an affinity."""
    return _plain_digest("key", tenant_id, model, cache_key)


def _digest(tenant_id: int, *parts: Any) -> str:
    """The digest of ``parts`` (not of the tenant), remembered for this tenant only."""
    data = orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)
    mid = len(data) // 2
    summary = (tenant_id, len(data), data[:SLICE], data[mid : mid + SLICE], data[-SLICE:])
    return _memo.lookup(data, summary, len(data), partial(_hash, data))


def _plain_digest(*parts: Any) -> str:
    return _hash(orjson.dumps(parts, option=orjson.OPT_SORT_KEYS))


def _hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=12).hexdigest()


# A conversation's head (system prompt, tools, first message: often 10-100 KB for an agent) is sent
# again on every turn. Entries are per tenant: a head answered from the memo is quicker than a new one,
# so a shared memo would let one tenant time whether another had sent a given prompt. blake2b costs ~14 instructions a byte, and even a dict keyed by the head's bytes
# would hash them all (siphash, ~3 a byte); a summary (the length and a few slices) finds the entry,
# and one comparison of the whole head (a fraction of an instruction a byte) decides a hit.
MEMO_MIN_BYTES = 4096  # a smaller head hashes in fewer instructions than it takes to look it up
MEMO_MAX_BYTES = 8 * 1024 * 1024  # heads held at most, oldest out first
SLICE = 64  # characters of a head in its summary, from each place


class DigestMemo:
    """Digests of recent large heads. An entry is found by the head's summary and used only when the
    whole head equals the one it was computed from (two heads with one summary: the newer is held)."""

    def __init__(self, max_bytes: int = MEMO_MAX_BYTES, min_bytes: int = MEMO_MIN_BYTES) -> None:
        self._entries: dict[Hashable, tuple[object, str, int]] = {}  # summary -> (head, digest, size)
        self._max_bytes, self._min_bytes = max_bytes, min_bytes
        self.held_bytes = 0
        self.hits = 0

    def lookup(self, head: object, summary: Hashable, size: int, digest: Callable[[], str]) -> str:
        """The digest of ``head`` (about ``size`` bytes), computed by ``digest`` unless held."""
        if not self._min_bytes <= size <= self._max_bytes:
            return digest()
        held = self._entries.pop(summary, None)
        if held is not None:
            self.held_bytes -= held[2]
            if held[0] == head:
                self._entries[summary] = held  # now the newest
                self.held_bytes += size
                self.hits += 1
                return held[1]
        value = digest()
        self._entries[summary] = (head, value, size)
        self.held_bytes += size
        while self.held_bytes > self._max_bytes:
            oldest = next(iter(self._entries))
            self.held_bytes -= self._entries.pop(oldest)[2]
        return value


_memo = DigestMemo()
