"""The two wire dialects the fleet serves, as plain records of functions."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sim.context import Exchange
from sim.dialects import anthropic_request, anthropic_response, openai_request, openai_response
from sim.prompt import Prompt

Frames = list[tuple[int, bytes]]


@dataclass(frozen=True, slots=True)
class Dialect:
    name: str
    parse: Callable[[Any], tuple[str, Prompt]]
    body: Callable[[Exchange], bytes]
    frames: Callable[[Exchange], tuple[Frames, int]]
    include_usage: Callable[[dict[str, Any]], bool]
    request_id_header: str
    response_id_prefix: str
    tool_id_prefix: str
    default_max_tokens: int


OPENAI = Dialect(
    name="openai",
    parse=openai_request.parse,
    body=openai_response.body,
    frames=openai_response.frames,
    include_usage=openai_request.include_usage,
    request_id_header="x-request-id",
    response_id_prefix="chatcmpl-",
    tool_id_prefix="call_",
    default_max_tokens=4096,
)

ANTHROPIC = Dialect(
    name="anthropic",
    parse=anthropic_request.parse,
    body=anthropic_response.body,
    frames=anthropic_response.frames,
    include_usage=lambda body: True,
    request_id_header="request-id",
    response_id_prefix="msg_01",
    tool_id_prefix="toolu_01",
    default_max_tokens=4096,
)
