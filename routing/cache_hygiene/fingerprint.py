"""Conversation fingerprint: hash of the normalised prefix that stays the same across turns.

System (billing block removed), tools and the first message, with ``cache_control``
ignored and a string equal to one text block, identify a conversation; later
turns only append. Used for cache affinity.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from routing.cache_hygiene.billing import strip_openai_messages, strip_system
from routing.cache_hygiene.canonical import canonical_content, canonical_messages, canonical_system


def anthropic_fingerprint(body: dict[str, Any]) -> str | None:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return None
    system, _ = strip_system(body.get("system"))
    return _digest(canonical_system(system, mark_last=False), body.get("tools"), canonical_messages(messages[:1]))


def openai_fingerprint(body: dict[str, Any]) -> str | None:
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
    return _digest(None, body.get("tools"), head)


def keyed_fingerprint(tenant_id: int, model: str, cache_key: str) -> str:
    """The caller names its conversation (Responses ``prompt_cache_key``): scoped to the tenant and
    model, so two tenants' equal keys never share an affinity."""
    return _digest("key", tenant_id, model, cache_key)


def _digest(*parts: Any) -> str:
    return hashlib.blake2b(orjson.dumps(parts, option=orjson.OPT_SORT_KEYS), digest_size=12).hexdigest()
