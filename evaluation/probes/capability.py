"""Capability: context window, max output, tools and JSON mode, as the catalog declares them.

Each check is one row (variant = check name). A declared capability the provider
refuses (4xx) is ``unsupported``; a wrong-shaped answer is ``bad_response``.
Context and max-output checks read only to the first token, then hang up.
"""

from __future__ import annotations

import orjson

from evaluation.corpus import filler
from evaluation.models import ErrorClass, ProbeKind
from evaluation.probes.base import ProbeContext, measure
from evaluation.probes.outcome import Outcome
from evaluation.wire.base import ChatRequest
from evaluation.wire.tools import TOOL_NAME

# Fill this share of the declared window (minus max output): near the limit, safe from tokenizer drift.
CONTEXT_FILL_SHARE = 0.9
# Never build prompts bigger than this (tokens); windows above it are checked at this size.
CONTEXT_CHECK_CAP = 200_000
# Room for a complete JSON object: a cut-off answer is the provider's max_tokens, not a JSON-mode failure.
JSON_ANSWER_TOKENS = 1024


async def _context(ctx: ProbeContext) -> Outcome:
    room = min(ctx.offering.context_window - min(ctx.offering.max_output, 4096), CONTEXT_CHECK_CAP)
    tokens = max(1, int(room * CONTEXT_FILL_SHARE))
    request = ChatRequest(
        system=(), messages=({"role": "user", "content": filler(ctx.rng("context"), tokens)},), max_tokens=16
    )
    outcome, _ = await measure(ctx, ProbeKind.CAPABILITY, "context_window", request, stop_after_first=True)
    outcome.details["prompt_tokens"] = tokens
    return _refusal_is_unsupported(outcome)


async def _max_output(ctx: ProbeContext) -> Outcome:
    request = ChatRequest(
        system=(),
        messages=({"role": "user", "content": "Count from one upwards in words."},),
        max_tokens=ctx.offering.max_output,
    )
    outcome, _ = await measure(ctx, ProbeKind.CAPABILITY, "max_output", request, stop_after_first=True)
    outcome.details["max_tokens"] = ctx.offering.max_output
    return _refusal_is_unsupported(outcome)


async def _tools(ctx: ProbeContext) -> Outcome:
    request = ChatRequest(
        system=(),
        messages=({"role": "user", "content": "What is the weather in Paris?"},),
        max_tokens=64,
        stream=False,
        tools=True,
    )
    outcome, timed = await measure(ctx, ProbeKind.CAPABILITY, "tools", request)
    if timed is not None and not any(call.get("name") == TOOL_NAME for call in timed.reply.tool_calls):
        outcome.error_class, outcome.details["error"] = ErrorClass.BAD_RESPONSE, "no call of the required tool"
    return _refusal_is_unsupported(outcome)


async def _json_mode(ctx: ProbeContext) -> Outcome:
    prompt = 'Reply with a JSON object with keys "city" and "country" for the capital of France.'
    request = ChatRequest(
        system=(), messages=({"role": "user", "content": prompt},), max_tokens=64, stream=False, json_mode=True
    )
    outcome, timed = await measure(ctx, ProbeKind.CAPABILITY, "json_mode", request)
    if timed is not None and timed.reply.finish_reason == "length":
        outcome.details["inconclusive"] = "answer cut at max_tokens"
    elif timed is not None:
        try:
            parsed = orjson.loads(timed.reply.text)
        except orjson.JSONDecodeError:
            parsed = None
        if not isinstance(parsed, dict):
            outcome.error_class, outcome.details["error"] = ErrorClass.BAD_RESPONSE, "answer is not a JSON object"
    return _refusal_is_unsupported(outcome)


def _refusal_is_unsupported(outcome: Outcome) -> Outcome:
    if outcome.error_class == ErrorClass.CLIENT_ERROR:
        outcome.error_class = ErrorClass.UNSUPPORTED
    return outcome


async def run(ctx: ProbeContext) -> list[Outcome]:
    checks = [_context, _max_output]
    if "tools" in ctx.offering.parameters:
        checks.append(_tools)
    if "json_mode" in ctx.offering.parameters:
        checks.append(_json_mode)
    return [await check(ctx) for check in checks]
