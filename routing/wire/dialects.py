"""The caller's dialect as one value, so handlers do not branch on it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from contracts.usage import Tokens
from routing.http.errors import GatewayError
from routing.wire import anthropic, openai, responses
from routing.wire.request import Body, RequestView


@dataclass(frozen=True, slots=True)
class Dialect:
    name: str
    view: Callable[[Body], RequestView]
    error_body: Callable[[GatewayError], bytes]
    stream_error: Callable[[GatewayError], bytes]
    usage_payload: Callable[..., dict[str, Any]]
    upstream_path: str = ""  # the providers' endpoint when it is not the adapter's (embeddings: "/embeddings")

    def usage(self, tokens: Tokens, cost_usd: float, *, estimated: bool) -> dict[str, Any]:
        return self.usage_payload(tokens, cost_usd, estimated=estimated)


OPENAI = Dialect("openai", openai.view, openai.error_body, openai.stream_error, openai.usage_payload)
ANTHROPIC = Dialect("anthropic", anthropic.view, anthropic.error_body, anthropic.stream_error, anthropic.usage_payload)
RESPONSES = Dialect("responses", responses.view, responses.error_body, responses.stream_error, responses.usage_payload)
