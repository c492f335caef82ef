"""One request through a simulated provider: validate, admit, maybe fail, cache, answer."""

from __future__ import annotations

import itertools
import time
from typing import Any

import orjson
from aiohttp import web

from contracts.regions import REGION_HEADER
from sim import completion as completion_mod
from sim import errors as e
from sim.context import Exchange
from sim.dialects import headers as hdr
from sim.dialects.error_styles import render_error
from sim.dialects.registry import Dialect
from sim.draws import Draws
from sim.errors import SimError
from sim.faults import Fault
from sim.fleet import Fleet, Offering, Provider
from sim.perf import active_incidents, draw_timing
from sim.prompt import Prompt
from sim.streaming import CLIENT_GONE, Pacer, plain, stream
from sim.transport import ConnectionDropped, drop
from sim.usage import SimUsage

HTTP_FAULTS = {
    "http_429": (e.RATE_LIMIT, "Rate limit reached for requests. Please try again later."),
    "http_500": (e.SERVER, "The server had an error while processing your request. Sorry about that!"),
    "http_502": (e.BAD_GATEWAY, "Bad gateway"),
    "http_503": (e.UNAVAILABLE, "The engine is currently overloaded, please try again later."),
    "http_529": (e.OVERLOADED, "Overloaded"),
}
_ids = itertools.count(1)


def _request_id() -> str:
    return f"req_{next(_ids):08x}{int(time.time() * 1000) & 0xFFFFFF:06x}"


def _text(value: str) -> str:
    """Surrogate-escaped text (undecodable bytes in a URL) as valid UTF-8 for the JSON log."""
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _headers(request: web.Request) -> dict[str, str]:
    """Headers as plain ``str`` (not ``istr``) decoded from the wire bytes, so the log is always JSON.

    ``request.headers`` keys are ``multidict.istr``, a ``str`` subclass orjson refuses as a
    dict key, and values with non-UTF-8 bytes come back surrogate-escaped, which orjson refuses too.
    """
    return {name.decode("latin-1"): value.decode("utf-8", "replace") for name, value in request.raw_headers}


def _log(fleet: Fleet, slug: str, request: web.Request, raw: bytes, request_id: str) -> dict[str, Any]:
    entry = {
        "id": request_id,
        "provider": slug,
        "method": request.method,
        "path": _text(request.path),
        "query": _text(request.query_string),
        "headers": _headers(request),
        "body": raw.decode("utf-8", errors="replace"),
        "json": None,
        "timestamp": time.time(),
    }
    fleet.log.append(slug, entry)
    return entry


def _check_auth(provider: Provider, request: web.Request) -> None:
    if not provider.profile.require_auth:
        return
    if request.headers.get("Authorization", "").removeprefix("Bearer ").strip() or request.headers.get("x-api-key"):
        return
    raise SimError(
        e.AUTH,
        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
    )


def _offering(provider: Provider, model: str, dialect: Dialect) -> Offering:
    offering = provider.offering(model)
    if offering is None or offering.spec.status == "disabled":
        message = (
            f"model: {model}"
            if dialect.name == "anthropic"
            else f"The model `{model}` does not exist or you do not have access to it."
        )
        raise SimError(e.NOT_FOUND, message, param="model")
    return offering


def _check_chat(offering: Offering, model: str) -> None:
    """An embedding model is refused on the chat endpoints, as OpenAI refuses it."""
    if "embeddings" in offering.spec.parameters:
        message = f"This is not a chat model and thus not supported in this endpoint: `{model}` serves /v1/embeddings."
        raise SimError(e.NOT_FOUND, message, param="model")


def _check_size(offering: Offering, prompt: Prompt, dialect: Dialect) -> None:
    window = offering.spec.context_window
    if prompt.tokens > window:
        if dialect.name == "anthropic":
            raise SimError(e.INVALID, f"prompt is too long: {prompt.tokens} tokens > {window} maximum")
        message = f"This model's maximum context length is {window} tokens. However, your messages resulted in {prompt.tokens} tokens. Please reduce the length of the messages."
        raise SimError(e.CONTEXT, message, param="messages", code="context_length_exceeded")
    if prompt.max_tokens is not None and prompt.max_tokens > offering.spec.max_output:
        limit = offering.spec.max_output
        message = f"max_tokens: {prompt.max_tokens} > {limit}, which is the maximum allowed number of output tokens for {offering.spec.upstream_model}"
        raise SimError(e.INVALID, message, param="max_tokens", code="invalid_value")


def _admit(fleet: Fleet, provider: Provider, offering: Offering, prompt: Prompt) -> dict[str, str]:
    if offering.rpm is None and offering.tpm is None:
        return {}
    estimate = prompt.tokens + (prompt.max_tokens or 0)
    admission = fleet.limiter.admit(
        offering.key, rpm=offering.rpm, tpm=offering.tpm, tokens=estimate, now=fleet.clock.real_now()
    )
    real_reset = admission.reset_s  # windows run on real time
    limits = hdr.limit_headers(provider.profile.ratelimit_headers, admission, real_reset)
    if admission.allowed:
        return limits
    what = "requests per min (RPM)" if admission.exceeded == "requests" else "tokens per min (TPM)"
    limit = admission.limit_requests if admission.exceeded == "requests" else admission.limit_tokens
    message = f"Rate limit reached for {offering.spec.upstream_model} on {what}: Limit {limit}. Please try again in {hdr.go_duration(real_reset)}."
    raise SimError(e.RATE_LIMIT, message, code="rate_limit_exceeded", headers={**limits, **hdr.retry_after(real_reset)})


def _fault(fleet: Fleet, provider: Provider, offering: Offering, draws: Draws) -> Fault | None:
    profile = offering.profile
    for incident in active_incidents(profile, fleet.clock):
        if incident.kind == "outage":
            return Fault(incident.fault, profile.stall_s)
    fault = fleet.faults.pick(provider.slug, offering.names, profile, draws, fleet.clock.now())
    if fault and fault.kind in HTTP_FAULTS:
        kind, message = HTTP_FAULTS[fault.kind]
        wait = (
            hdr.retry_after(max(0.001, fleet.clock.real(1.0)))
            if kind in (e.RATE_LIMIT, e.UNAVAILABLE, e.OVERLOADED)
            else {}
        )
        raise SimError(kind, message, headers=wait)
    return fault


def _exchange(
    fleet: Fleet,
    dialect: Dialect,
    offering: Offering,
    prompt: Prompt,
    draws: Draws,
    model: str,
    body: dict[str, Any],
    request_id: str,
    overreport: float = 1.0,  # an injected token_overreport fault's factor (sim/faults.py)
) -> Exchange:
    spec, profile = offering.spec, offering.profile
    ttl = spec.cache_ttl_s
    cache = fleet.cache.apply(
        offering.key.encode(), prompt, policy=spec.cache_policy, spec=profile.cache, ttl_s=ttl, now=fleet.clock.now()
    )
    max_tokens = min(prompt.max_tokens or dialect.default_max_tokens, spec.max_output)
    answer = completion_mod.build(prompt, profile, draws, max_tokens=max_tokens, tool_id_prefix=dialect.tool_id_prefix)
    truth = SimUsage(
        prompt.tokens, cache.read, cache.write_5m, cache.write_1h, answer.output_tokens, answer.reasoning_tokens
    )
    reported = truth.inflated(profile.dishonesty.token_overreport * overreport)
    return Exchange(
        offering=offering,
        prompt=prompt,
        completion=answer,
        usage=reported,
        true_usage=truth,
        cache=cache,
        request_id=request_id,
        response_id=dialect.response_id_prefix + draws.hex_id(24),
        model=model,
        created=int(time.time()),
        include_usage=prompt.stream and dialect.include_usage(body),
        billed_cost_micros=reported.cost(offering.billed),
    )


def error_response(provider: Provider | None, err: SimError, request_id: str, dialect: Dialect) -> web.Response:
    style = provider.profile.error_style if provider else ("anthropic" if dialect.name == "anthropic" else "openai")
    payload, content_type = render_error(style, err, request_id)
    headers = {**err.headers, dialect.request_id_header: request_id}
    return web.Response(status=err.status, body=payload, headers=headers, content_type=content_type)


def _ground_truth(x: Exchange, fault: Fault | None) -> dict[str, Any]:
    return {
        "offering": x.offering.key,
        "fault": fault.kind if fault else None,
        "true_usage": x.true_usage.as_dict(),
        "reported_usage": x.usage.as_dict(),
        "billed_cost_micros": x.billed_cost_micros,
        "published_cost_micros": x.true_usage.cost(x.offering.spec.prices),
    }


def _parse_body(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None


async def serve(fleet: Fleet, dialect: Dialect, request: web.Request) -> web.StreamResponse:
    arrived = fleet.clock.stamp()  # TTFT runs from here: parsing and drawing are part of it
    slug = request.match_info["provider"]
    provider = fleet.providers.get(slug)
    request_id = _request_id()
    raw = await request.read()
    entry = _log(fleet, slug, request, raw, request_id)
    if provider is None:
        return error_response(None, SimError(e.NOT_FOUND, f"Unknown simulated provider {slug!r}."), request_id, dialect)
    offering: Offering | None = None
    try:
        body = entry["json"] = _parse_body(raw)
        _check_auth(provider, request)
        model, prompt = dialect.parse(body)
        offering = _offering(provider, model, dialect)
        offering.counters["requests"] += 1
        _check_chat(offering, model)
        _check_size(offering, prompt, dialect)
        draws = fleet.draws_for(offering, raw)
        limits = _admit(fleet, provider, offering, prompt)
        fault = _fault(fleet, provider, offering, draws)
    except SimError as err:
        if offering is not None:
            offering.counters["errors"] += 1
        entry["sim"] = {"status": err.status, "error": err.kind}
        return error_response(provider, err, request_id, dialect)
    if fault:
        offering.counters["faults"] += 1
    if fault and fault.kind in ("connection_refused", "connection_reset"):
        entry["sim"] = {"fault": fault.kind, "offering": offering.key}
        drop(request, reset=fault.kind == "connection_reset")
        raise ConnectionDropped()
    x = _exchange(fleet, dialect, offering, prompt, draws, model, body, request_id, fault.overreport if fault else 1.0)
    incidents = active_incidents(offering.profile, fleet.clock)
    timing = draw_timing(
        offering.profile, fleet.clock, draws, uncached_tokens=x.true_usage.input_uncached, incidents=incidents
    )
    hop = fleet.network.hop(request.headers.get(REGION_HEADER), provider.slug, draws)  # sim/network.py
    if hop is not None:
        timing.ttft_s += hop.delay_ms / 1000.0
    entry["sim"] = {**_ground_truth(x, fault), "timing": timing.as_dict(), "network": hop and hop.as_dict()}
    headers = {**limits, dialect.request_id_header: request_id, "x-sim-billed-cost-micros": str(x.billed_cost_micros)}
    slow = offering.profile.drip_factor if fault and fault.kind == "slow_drip" else 1.0
    pacer = Pacer(fleet.clock, timing, draws, slow, arrived)
    response = await _respond(fleet, dialect, request, x, pacer, fault, headers)
    if request.get(CLIENT_GONE):
        entry["sim"]["client_gone"] = True  # left before the first byte; the stall was cut short
    return response


async def _respond(
    fleet: Fleet,
    dialect: Dialect,
    request: web.Request,
    x: Exchange,
    pacer: Pacer,
    fault: Fault | None,
    headers: dict[str, str],
) -> web.StreamResponse:
    offering = x.offering
    if fleet.clock.zero and fault is None and not x.prompt.stream:
        return web.Response(body=dialect.body(x), headers={**headers, "Content-Type": "application/json"})
    queued = offering.slots.locked()
    async with offering.slots:
        if queued:  # waiting for a slot shows up as TTFT: the timeline starts once served
            pacer.due = fleet.clock.stamp()
        if x.prompt.stream:
            frames, tail = dialect.frames(x)
            return await stream(request, frames, tail, pacer, fault, headers)
        return await plain(request, dialect.body(x), pacer, fault, headers, x.usage.output)
