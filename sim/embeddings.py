"""``POST /<provider>/v1/embeddings`` in the OpenAI shape: one deterministic unit vector per input,
``dimensions`` to shorten it, ``encoding_format`` float or base64 (little-endian float32), usage as
input tokens only. Auth, rate limits, injected HTTP faults and the request log as for chat."""

from __future__ import annotations

import base64
import hashlib
import math
import struct
from typing import Any

import orjson
from aiohttp import web

from contracts.tokens import count_text_tokens
from contracts.usage import Tokens, cost_micros
from sim import errors as e
from sim.control import FLEET_KEY
from sim.dialects.registry import OPENAI
from sim.errors import SimError
from sim.fleet import Fleet, Offering, Provider
from sim.prompt import Prompt
from sim.respond import _admit, _check_auth, _fault, _log, _offering, _parse_body, _request_id, error_response

DEFAULT_DIMENSIONS = 1536  # text-embedding-3-small's; a model named "...large" has LARGE_DIMENSIONS
LARGE_DIMENSIONS = 3072
MAX_INPUTS = 2048  # OpenAI's limit on one request's inputs
UNIT = 2.0 / 2**32  # an unsigned 32-bit value times this, minus 1: uniform in [-1, 1)


def native_dimensions(upstream_model: str) -> int:
    return LARGE_DIMENSIONS if "large" in upstream_model else DEFAULT_DIMENSIONS


def _inputs(body: dict[str, Any]) -> list[str | list[int]]:
    """Each input as text or a token array; anything else is the provider's own 400."""
    value = body.get("input")
    if isinstance(value, str) or (isinstance(value, list) and value and all(isinstance(t, int) for t in value)):
        items: list[Any] = [value]
    elif isinstance(value, list) and value:
        items = value
    else:
        raise SimError(e.INVALID, "'input' must be a string, an array of strings or of token arrays.", param="input")
    if len(items) > MAX_INPUTS:
        raise SimError(e.INVALID, f"'input' has more than {MAX_INPUTS} items.", param="input")
    for item in items:
        tokens = isinstance(item, list) and item and all(isinstance(t, int) for t in item)
        if not (isinstance(item, str) and item) and not tokens:
            raise SimError(e.INVALID, "'input' items must be non-empty strings or token arrays.", param="input")
    return items


def _dimensions(body: dict[str, Any], offering: Offering) -> int:
    native = native_dimensions(offering.spec.upstream_model)
    value = body.get("dimensions")
    if value is None:
        return native
    if "dimensions" not in offering.spec.parameters:
        raise SimError(e.INVALID, "This model does not support specifying dimensions.", param="dimensions")
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= native:
        raise SimError(e.INVALID, f"'dimensions' must be an integer from 1 to {native}.", param="dimensions")
    return value


def _tokens(item: str | list[int]) -> int:
    return len(item) if isinstance(item, list) else count_text_tokens(item)


def vector(item: str | list[int], dimensions: int) -> list[float]:
    """The same input always gives the same unit vector (a shortened one is the full one's first values
    renormalised, as OpenAI's are). The values come from SHAKE-256 of the input, whose output is a prefix of
    any longer one: one C call for all of them (a draw per value cost ~0.1 s of CPU a batch of 8)."""
    raw = hashlib.shake_256(orjson.dumps(item)).digest(4 * dimensions)
    values = [x * UNIT - 1.0 for x in struct.unpack(f"<{dimensions}I", raw)]
    norm = math.sqrt(sum(x * x for x in values)) or 1.0
    return [x / norm for x in values]


def _encoded(values: list[float], encoding: str) -> list[float] | str:
    if encoding == "base64":
        return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()
    return values


def answer(body: dict[str, Any], offering: Offering, model: str) -> tuple[dict[str, Any], int]:
    """The response body and its (true) input tokens."""
    items = _inputs(body)
    dimensions = _dimensions(body, offering)
    encoding = body.get("encoding_format", "float")
    if encoding not in ("float", "base64"):
        raise SimError(e.INVALID, "'encoding_format' must be 'float' or 'base64'.", param="encoding_format")
    data = [
        {"object": "embedding", "index": i, "embedding": _encoded(vector(item, dimensions), encoding)}
        for i, item in enumerate(items)
    ]
    tokens = sum(_tokens(item) for item in items)
    if tokens > offering.spec.context_window * len(items):
        raise SimError(e.INVALID, "An input is longer than the model's context length.", param="input")
    usage = {"prompt_tokens": tokens, "total_tokens": tokens}
    return {"object": "list", "data": data, "model": model, "usage": usage}, tokens


def _checked(fleet: Fleet, provider: Provider, request: web.Request, body: Any) -> tuple[Offering, str]:
    _check_auth(provider, request)
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        raise SimError(e.INVALID, "'model' is required.", param="model")
    model: str = body["model"]
    offering = _offering(provider, model, OPENAI)
    if "embeddings" not in offering.spec.parameters:
        raise SimError(e.INVALID, f"The model `{model}` does not support embeddings.", param="model")
    return offering, model


async def embeddings(request: web.Request) -> web.Response:
    fleet = request.app[FLEET_KEY]
    slug = request.match_info["provider"]
    provider = fleet.providers.get(slug)
    request_id = _request_id()
    raw = await request.read()
    entry = _log(fleet, slug, request, raw, request_id)
    if provider is None or provider.dialect != "openai":
        err = SimError(e.NOT_FOUND, f"Unknown simulated provider {slug!r} or no embeddings endpoint.")
        return error_response(provider, err, request_id, OPENAI)
    try:
        body = entry["json"] = _parse_body(raw)
        offering, model = _checked(fleet, provider, request, body)
        offering.counters["requests"] += 1
        payload, tokens = answer(body, offering, model)
        _admit(fleet, provider, offering, Prompt(tokens=tokens))
        _fault(fleet, provider, offering, fleet.draws_for(offering, raw))  # HTTP faults raise; others do not apply
    except SimError as err:
        entry["sim"] = {"status": err.status, "error": err.kind}
        return error_response(provider, err, request_id, OPENAI)
    cost = cost_micros(Tokens(input_uncached=tokens), offering.billed)
    entry["sim"] = {"offering": offering.key, "true_usage": {"input_total": tokens}, "billed_cost_micros": cost}
    headers = {OPENAI.request_id_header: request_id, "x-sim-billed-cost-micros": str(cost)}
    return web.Response(body=orjson.dumps(payload), headers=headers, content_type="application/json")
