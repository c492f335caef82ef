"""The body forwarded to one offering: translated if dialects differ, cleaned for its cache."""

from __future__ import annotations

from typing import Any

import orjson

from contracts.snapshot import OfferingSnapshot
from routing.cache_hygiene.billing import strip_openai_messages, strip_system
from routing.cache_hygiene.canonical import canonicalise
from routing.http.errors import UpstreamFailure
from routing.translate import request_a2o, request_o2a
from routing.translate.refusal import refused

Body = dict[str, Any]
_GATEWAY_FIELDS = ("provider",)  # ours, never forwarded


def _without_gateway_fields(body: Body) -> Body:
    return {k: v for k, v in body.items() if k not in _GATEWAY_FIELDS}


def _blocks(content: Any) -> list[Any]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


def alternate_roles(messages: list[Any]) -> list[Any]:
    """``role: "system"`` inside messages (agents send it) is refused by the Messages API, and so
    are two user turns in a row: a system message joins the user turn before it (or after it) as
    text blocks, so the messages before it keep their bytes from one turn to the next."""
    if not any(isinstance(m, dict) and m.get("role") == "system" for m in messages):
        return messages
    out: list[Any] = []
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "system":
            message = {"role": "user", "content": message.get("content", "")}
        if out and isinstance(message, dict) and message.get("role") == "user" and out[-1].get("role") == "user":
            out[-1] = {**out[-1], "content": _blocks(out[-1].get("content")) + _blocks(message.get("content"))}
        else:
            out.append(message)
    return out


def anthropic_for(body: Body, offering: OfferingSnapshot) -> Body:
    """Anthropic body after hygiene: first-party keeps it as sent; others lose the billing block."""
    out = _without_gateway_fields(body)
    if offering.dialect == "anthropic" and isinstance(out.get("messages"), list):
        out["messages"] = alternate_roles(out["messages"])
    if offering.keeps_billing_block:
        return out
    if "system" in out:
        out["system"], _ = strip_system(out["system"])
        if out["system"] in ("", []):
            del out["system"]
    canonicalise(out, offering.cache_policy)
    return out


def openai_for(body: Body, offering: OfferingSnapshot) -> Body:
    out = _without_gateway_fields(body)
    messages = out.get("messages")
    if isinstance(messages, list) and not offering.keeps_billing_block:
        copied = [dict(m) if isinstance(m, dict) else m for m in messages]
        if strip_openai_messages(copied):
            out["messages"] = copied
    return out


def _clamp_max_tokens(body: Body, offering: OfferingSnapshot) -> Body:
    """Agents ask for more output than some offerings allow; routing accepted the offering, so lower it."""
    over = [
        k
        for k in ("max_tokens", "max_completion_tokens")
        if isinstance(body.get(k), int) and body[k] > offering.max_output
    ]
    return {**body, **dict.fromkeys(over, offering.max_output)} if over else body


class Unsupported(UpstreamFailure):
    """Not sent: the request uses a feature this offering's dialect cannot honour (translate/refusal.py).
    Another offering may; when none can, the caller gets a 400 naming the feature."""

    def __init__(self, message: str, *, param: str, elsewhere: bool) -> None:
        super().__init__(400, "unsupported", message, retryable=elsewhere, code="unsupported_parameter")
        self.param = param


def unsupported(caller: str, body: Body, offering: OfferingSnapshot) -> Unsupported | None:
    """The failure to book, unsent, when ``offering``'s dialect cannot honour a feature of the request."""
    refusal = refused(caller, body, offering.dialect)
    if refusal is None:
        return None
    return Unsupported(refusal.message, param=refusal.param, elsewhere=refusal.elsewhere)


def forward_body(caller: str, body: Body, offering: OfferingSnapshot) -> bytes:
    body = _clamp_max_tokens(body, offering)
    if caller == "anthropic":
        clean = anthropic_for(body, offering)
        if offering.dialect == "anthropic":
            clean["model"] = offering.upstream_model
            return orjson.dumps(clean)
        thinks = "reasoning" in offering.parameters
        return orjson.dumps(request_a2o.request(clean, upstream_model=offering.upstream_model, thinks=thinks))
    clean = openai_for(body, offering)
    if offering.dialect == "openai":
        clean["model"] = offering.upstream_model
        if caller == "responses" and "reasoning" not in offering.parameters:
            clean.pop("reasoning_effort", None)  # translated from reasoning.effort: only where the model reasons
        if clean.get("stream") is True:
            clean["stream_options"] = {**(clean.get("stream_options") or {}), "include_usage": True}
        return orjson.dumps(clean)
    translated = request_o2a.request(
        clean,
        upstream_model=offering.upstream_model,
        default_max_tokens=offering.max_output,
        thinks="reasoning" in offering.parameters,
    )
    return orjson.dumps(translated)
