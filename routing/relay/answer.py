"""Relaying one opened upstream answer to the client: whole JSON, or an SSE stream.

After the first byte reaches the client nothing is retried; a failure mid-stream
(cut, idle gap, deadline) ends the stream with an in-band error in the caller's dialect.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import orjson

from routing.handoff.call import Call
from routing.handoff.drain import drain
from routing.handoff.end_state import HOLD_EXHAUSTED
from routing.http.asgi_io import Send, body_send, end_stream, respond, send_chunk, start_stream
from routing.http.errors import GatewayError
from routing.http.raw_out import raw_out
from routing.http.sse import SseSplitter
from routing.relay import responses
from routing.relay.raw import OutputAllowancePassed, RawPump
from routing.translate import response as translate
from routing.translate.model_field import Renamed, rename_json
from routing.translate.stream_anthropic import AnthropicPassthrough, AnthropicToOpenAI
from routing.translate.stream_base import FailsInBand, StreamConverter
from routing.translate.stream_openai import OpenAIPassthrough, OpenAIToAnthropic
from routing.upstream.attempt import ATTEMPT_ERRORS, Opened
from routing.upstream.reads import BufferedReads, release_at_end

log = logging.getLogger("routing.relay.answer")

TIMER_SLACK_S = 1.0  # idle-gap precision traded for fewer timer re-arms on the hot path (at most idle / 4)
# Our count of a stream's output is 4 characters a token (contracts.tokens); a provider's tokenizer counts
# code and CJK denser or sparser. A stream is ended only once our count passes its output allowance by this
# much, so an answer within its max_tokens is never cut; the charge is clamped to the allowance either way.
CUTOFF_MARGIN_PCT = 100
CUTOFF_MARGIN_TOKENS = 16


def cutoff_tokens(allowance: int) -> int:
    """Our output count past which a stream is ended (``CUTOFF_MARGIN_PCT`` explains the margin)."""
    return allowance + allowance * CUTOFF_MARGIN_PCT // 100 + CUTOFF_MARGIN_TOKENS


def converter_for(call: Call, upstream_dialect: str) -> StreamConverter:
    if call.dialect.name == "responses":
        return responses.converter(call, upstream_dialect)
    payload = call.usage_for_client
    model = call.view.model
    if call.dialect.name == "openai":
        if upstream_dialect == "openai":
            passthrough = OpenAIPassthrough(call.tracker, payload, client_wants_usage=call.view.wants_stream_usage)
            return Renamed(passthrough, model)
        return AnthropicToOpenAI(
            call.tracker,
            payload,
            completion_id=f"chatcmpl-{call.request_id}",
            model=model,
            include_usage=call.view.wants_stream_usage,
        )
    if upstream_dialect == "anthropic":
        return Renamed(AnthropicPassthrough(call.tracker, payload), model)
    return OpenAIToAnthropic(call.tracker, payload, message_id=f"msg_{call.request_id}", model=model)


async def relay_json(call: Call, opened: Opened, send: Send) -> None:
    assert call.offering is not None
    try:
        upstream: dict[str, Any] = orjson.loads(opened.first)
    except orjson.JSONDecodeError as exc:
        raise GatewayError(502, "upstream_error", "The provider returned a body that is not JSON.") from exc
    call.tracker.merge(upstream.get("usage"))
    call.facts.observe_answer(upstream)
    call.complete = True
    body = _caller_body(call, upstream)
    call.status, call.http_status = "ok", 200
    call.response_started = True
    await _before_last_byte(call)
    await respond(send, 200, orjson.dumps(body), call.provenance())
    call.delivered = True


def _caller_body(call: Call, upstream: dict[str, Any]) -> dict[str, Any]:
    assert call.offering is not None
    same = call.dialect.name == call.offering.dialect
    text = (
        translate.text_of_openai(upstream)
        if call.offering.dialect == "openai"
        else translate.text_of_anthropic(upstream)
    )
    call.tracker.delivered(text)
    usage = call.usage_for_client()
    if call.dialect.name == "responses":
        return responses.caller_body(call, upstream, usage)
    if same:
        upstream["usage"] = usage
        return rename_json(upstream, call.view.model)
    if call.dialect.name == "anthropic":
        return translate.openai_to_anthropic(
            upstream, message_id=f"msg_{call.request_id}", model=call.view.model, usage=usage
        )
    return translate.anthropic_to_openai(
        upstream, completion_id=f"chatcmpl-{call.request_id}", model=call.view.model, usage=usage
    )


async def relay_stream(call: Call, opened: Opened, send: Send, *, idle_s: float, deadline: float) -> None:
    assert call.offering is not None
    converter = converter_for(call, call.offering.dialect)
    call.response_started = True
    await start_stream(send, call.provenance())
    send = body_send(send)  # the status is noted: the chunks skip the noting wrapper
    call.status, call.http_status = "ok", 200
    try:
        await _pump(call, opened, converter, send, idle_s=idle_s, deadline=deadline)
    except ATTEMPT_ERRORS as exc:
        await _fail_in_band(call, send, _mid_stream_error(exc), converter)
        return
    except OutputAllowancePassed:
        await _end_at_allowance(call, send, converter)
        return
    except asyncio.CancelledError:
        if call.client_gone:  # the provider bills what it generates: read on for its usage (routing.handoff.drain)
            await drain(opened, converter, call.facts, idle_s=idle_s, deadline=deadline)
        raise
    finally:
        if converter.done:
            release_at_end(opened.response)  # kept alive for the next request once its body ends
        else:
            opened.response.close()
    await _finish(call, converter, send)


async def _pump(
    call: Call, opened: Opened, converter: StreamConverter, send: Send, *, idle_s: float, deadline: float
) -> None:
    """Forward until the upstream's terminal event or EOF: from the upstream's read callback under uvicorn
    (routing.relay.raw), else by this task. One timer for the whole stream, moved forward at most every
    ``TIMER_SLACK_S``: the idle gap is enforced within that slack, and the deadline exactly, without a
    timer allocation per chunk."""
    chunk, opened.first = opened.first, b""  # the stream's frame holds no read while it waits for the next
    # Counted per chunk: reasoning no max_tokens bounds (DeepSeek's reasoner) or a model thinking past its
    # catalog cap would otherwise run on past what its hold priced, and the provider bills every token of it.
    cutoff = cutoff_tokens(call.output_allowance())
    raw = raw_out(send)
    if raw is not None:  # forwarded from the upstream's read callback (routing.relay.raw)
        pump = RawPump(
            call,
            converter,
            raw,
            observe=call.facts.observe,
            counted=call.tracker.output_estimate,
            cutoff=cutoff,
            idle_s=idle_s,
            deadline=deadline,
        )
        if await pump.run(opened.response.content, chunk):
            return
    splitter = SseSplitter()
    loop = asyncio.get_running_loop()
    slack = min(TIMER_SLACK_S, idle_s / 4)
    # Per relayed chunk, the loop body is the hot path: methods bound once, no coroutine of our own
    # between the read and the server's send (bench/gateway_instructions.py --profile paced).
    read, split, observe, feed, counted = (
        BufferedReads(opened.response.content).read,
        splitter.feed,
        call.facts.observe,
        converter.feed,
        call.tracker.output_estimate,
    )
    expiry: float | None = None  # when the timer fires; only this loop moves it
    async with asyncio.timeout(None) as timer:
        while chunk:
            events = split(chunk)
            observe(events)  # upstream id, finish reason, thinking (routing.usage.answer_facts)
            # A paced stream brings one event per read: no list and join for it.
            out = feed(events[0]) if len(events) == 1 else b"".join([feed(e) for e in events])
            if out:
                await send_chunk(send, out)
                call.delivered = True
            if converter.done:
                return
            if counted() > cutoff:
                raise OutputAllowancePassed
            now = loop.time()
            if expiry is None or expiry - now < idle_s - slack:
                expiry = now + min(idle_s, deadline - time.monotonic())
                timer.reschedule(expiry)
            chunk = b""
            chunk = await read()


async def _finish(call: Call, converter: StreamConverter, send: Send) -> None:
    if converter.upstream_error:
        call.status, call.complete = "upstream_error", False
        await end_stream(send)
        return
    if not converter.done:
        await _fail_in_band(
            call,
            send,
            GatewayError(502, "upstream_stream_cut", "The provider ended the stream before it was complete."),
            converter,
        )
        return
    call.complete = True
    tail = converter.finish()
    await _before_last_byte(call)
    await end_stream(send, tail)


async def _before_last_byte(call: Call) -> None:
    if call.before_last_byte is not None:
        await call.before_last_byte(call)


async def _end_at_allowance(call: Call, send: Send, converter: StreamConverter) -> None:
    """End the stream in-band with a stable code; the upstream is closed (no more tokens generated for
    us), and the call is charged for its output allowance at most (routing.handoff.end_state)."""
    call.extra_flags.append(HOLD_EXHAUSTED)
    call.error_code = HOLD_EXHAUSTED
    error = GatewayError(
        402, HOLD_EXHAUSTED,
        "The answer passed the most output this call may be charged for (its max_tokens plus the model's "
        "reasoning allowance); the gateway ended it.",
    )  # fmt: skip
    tail = converter.fail(error) if isinstance(converter, FailsInBand) else call.dialect.stream_error(error)
    await end_stream(send, tail)


def _mid_stream_error(exc: BaseException) -> GatewayError:
    if isinstance(exc, TimeoutError):
        return GatewayError(504, "upstream_timeout", "The provider stopped sending (idle gap or deadline exceeded).")
    log.info("stream cut: %s: %s", type(exc).__name__, exc)  # details for us, a plain sentence for the caller
    return GatewayError(502, "upstream_stream_cut", "The provider connection failed mid-stream.")


async def _fail_in_band(call: Call, send: Send, error: GatewayError, converter: StreamConverter) -> None:
    call.status = "upstream_error"
    call.extra_flags.append(error.code)
    tail = converter.fail(error) if isinstance(converter, FailsInBand) else call.dialect.stream_error(error)
    await end_stream(send, tail)
