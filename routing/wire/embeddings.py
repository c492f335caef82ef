"""OpenAI embeddings wire format (``POST /v1/embeddings``): the request view, the usage the caller sees
(input tokens only) and, as a dialect, OpenAI's error shape. The body goes to the offering's
``/embeddings`` endpoint as chat bodies go to theirs (routing/forwarding/prepare.py: model renamed,
``provider`` removed), and the answer comes back as is, with the model's public name and our usage."""

from __future__ import annotations

from typing import Any

from contracts.tokens import count_text_tokens
from contracts.usage import Tokens
from routing.http.errors import GatewayError, invalid_request
from routing.wire import openai, schemas
from routing.wire.dialects import Dialect
from routing.wire.request import Body, RequestView

PATH = "/v1/embeddings"
MAX_INPUTS = 2048  # OpenAI's limit on the inputs of one request

PARAMETER = "embeddings"  # what an embedding offering declares in the catalog, and what a call here needs


def _kind(item: Any) -> str:
    return "text" if isinstance(item, str) else "token" if isinstance(item, int) else "tokens"


def _refused(message: str) -> GatewayError:
    """A rule beyond the declared schema (routing/wire/schemas/embeddings.py), with its own code."""
    return GatewayError(400, "invalid_input", message, param="input")


def input_tokens(value: Any) -> int:
    """Our estimate of the input's tokens (a token array counts its length); refuses mixed or empty inputs.
    ``value`` passed the schema: a string, or a non-empty array of strings, token ids or token arrays."""
    if isinstance(value, str):
        items: list[Any] = [value]
    elif all(isinstance(item, int) for item in value):
        items = [value]  # one token array
    else:
        items = value
    kinds = {_kind(item) for item in items}
    if len(kinds) > 1:
        raise _refused("Mixed 'input': all strings, one token array or all token arrays, not a mix.")
    if len(items) > MAX_INPUTS:
        raise _refused(f"Too many items in 'input': {len(items)}, at most {MAX_INPUTS}.")
    if "" in items:
        raise _refused(f"Empty string in 'input' at index {items.index('')}: every input needs text.")
    return sum(len(item) if isinstance(item, list) else count_text_tokens(item) for item in items)


def view(body: Body) -> RequestView:
    schemas.EMBEDDINGS.check(body)
    if body.get("stream") not in (None, False):  # forwarded, it would ask the provider for a stream it has not
        raise invalid_request("'stream' is not supported for embeddings: the answer comes whole.", param="stream")
    needs = {PARAMETER, "dimensions"} if "dimensions" in body else {PARAMETER}
    prefs = body.get("provider")
    return RequestView(
        dialect=openai.NAME,
        model=body["model"],
        stream=False,
        max_tokens=None,
        input_estimate=input_tokens(body["input"]),
        needs=frozenset(needs),
        provider_prefs=prefs if isinstance(prefs, dict) else {},
        wants_stream_usage=False,
    )


def usage_payload(tokens: Tokens, cost_usd: float, *, estimated: bool = False) -> dict[str, Any]:
    usage: dict[str, Any] = {"prompt_tokens": tokens.input_total, "total_tokens": tokens.input_total, "cost": cost_usd}
    if estimated:
        usage["estimated"] = True
    return usage


# The caller speaks OpenAI: same name (usage events say dialect_in "openai"), errors and relay as for chat.
EMBEDDINGS = Dialect(
    openai.NAME, view, openai.error_body, openai.stream_error, usage_payload, upstream_path="/embeddings"
)
