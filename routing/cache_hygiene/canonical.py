"""Canonical Anthropic bodies so turn N's forwarded prompt is a byte prefix of turn N+1's.

Claude Code moves its ``cache_control`` breakpoints between turns (the newest user
message carries the last one) and re-sends an earlier one-block list as a plain
string. Both change the bytes of *earlier* messages. Per offering:

- ``raw_prefix``: every marker removed, a lone text block becomes a string;
- ``normalized``: the same, then one marker on the last system block (stable across
  turns), so explicit-marker providers still cache system + tools;
- ``none``: left as sent (after the billing block is gone).
"""

from __future__ import annotations

from typing import Any

EPHEMERAL = {"type": "ephemeral"}


def _clean_block(block: Any) -> Any:
    if isinstance(block, dict) and "cache_control" in block:
        return {k: v for k, v in block.items() if k != "cache_control"}
    return block


def canonical_content(content: Any) -> Any:
    """String ≡ one text block; no cache_control anywhere inside the content."""
    if not isinstance(content, list):
        return content
    blocks = [_clean_block(b) for b in content]
    if len(blocks) == 1 and isinstance(blocks[0], dict) and blocks[0].get("type") == "text" and len(blocks[0]) == 2:
        return blocks[0].get("text", "")
    return blocks


def canonical_messages(messages: list[Any]) -> list[Any]:
    out = []
    for message in messages:
        if isinstance(message, dict) and "content" in message:
            message = {**message, "content": canonical_content(message["content"])}
        out.append(message)
    return out


def canonical_system(system: Any, *, mark_last: bool) -> Any:
    if isinstance(system, str):
        if not mark_last or not system:
            return system
        system = [{"type": "text", "text": system}]
    if not isinstance(system, list):
        return system
    blocks = [_clean_block(b) for b in system]
    if mark_last and blocks and isinstance(blocks[-1], dict):
        blocks[-1] = {**blocks[-1], "cache_control": EPHEMERAL}
    return blocks


def canonicalise(body: dict[str, Any], policy: str) -> None:
    """Edit an Anthropic body in place for the offering's cache policy."""
    if policy not in ("raw_prefix", "normalized"):
        return
    if isinstance(body.get("messages"), list):
        body["messages"] = canonical_messages(body["messages"])
    if "system" in body:
        body["system"] = canonical_system(body["system"], mark_last=policy == "normalized")
    if isinstance(body.get("tools"), list):
        body["tools"] = [_clean_block(t) for t in body["tools"]]
