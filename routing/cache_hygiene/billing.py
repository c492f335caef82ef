"""The Claude Code billing block: ``x-anthropic-billing-header: cc_version=...; cch=...;``.

It carries a per-request ``cch`` hash (and ``cc_prev_req`` / ``cc_turn_index``) in
some versions, so leaving it in the system prompt changes the prompt's first bytes
on every turn and defeats every prefix cache. Only a system text block, or the
first line of a string system prompt, that *starts* with the header is removed;
user text that merely contains ``cch=`` is never touched.
"""

from __future__ import annotations

from typing import Any

BILLING_PREFIX = "x-anthropic-billing-header:"


def is_billing_text(text: Any) -> bool:
    return isinstance(text, str) and text.lstrip().startswith(BILLING_PREFIX)


def strip_system(system: Any) -> tuple[Any, bool]:
    """Anthropic ``system`` (string or text blocks) without the billing block; (value, changed)."""
    if isinstance(system, str):
        return _strip_first_line(system)
    if isinstance(system, list):
        kept = [
            b
            for b in system
            if not (isinstance(b, dict) and b.get("type") == "text" and is_billing_text(b.get("text")))
        ]
        if len(kept) != len(system):
            return kept, True
    return system, False


def _strip_first_line(text: str) -> tuple[str, bool]:
    if not is_billing_text(text):
        return text, False
    _, _, rest = text.partition("\n")
    return rest, True


def strip_openai_messages(messages: list[Any]) -> bool:
    """Leading system/developer messages of an OpenAI body; edits in place, True if changed."""
    changed = False
    for message in messages:
        if not isinstance(message, dict) or message.get("role") not in ("system", "developer"):
            break
        content = message.get("content")
        if isinstance(content, str) and is_billing_text(content):
            message["content"], _ = _strip_first_line(content)
            changed = True
        elif isinstance(content, list):
            new, did = strip_system(content)
            if did:
                message["content"] = new
                changed = True
    return changed
