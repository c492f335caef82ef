"""Quality canary: fixed kinds of checkable tasks with fresh operands per run.

One row per run: ``details.correct`` of ``details.total``; any wrong answer marks
the row ``wrong_answer``. The aggregation turns the share correct into a quality
score (Wilson CI) and flags ``degraded_quality`` when it is clearly below par.
"""

from __future__ import annotations

from evaluation.canaries import draw, is_correct
from evaluation.models import ErrorClass, ProbeKind
from evaluation.probes.base import ProbeContext, measure
from evaluation.probes.outcome import Outcome
from evaluation.wire.base import ChatRequest

ANSWER_TOKENS = 256  # answers are short; reasoning models think first, so leave them room
SYSTEM_PROMPT = "Answer exactly as asked, with no explanation."


async def run(ctx: ProbeContext) -> list[Outcome]:
    results = []
    last: Outcome | None = None
    for canary in draw(ctx.rng("quality")):
        request = ChatRequest(
            system=(SYSTEM_PROMPT,),
            messages=({"role": "user", "content": canary.prompt},),
            max_tokens=ANSWER_TOKENS,
            stream=False,
        )
        outcome, timed = await measure(ctx, ProbeKind.QUALITY, "canary", request)
        if timed is None:
            return [outcome]  # the provider failed; that is availability, not quality
        results.append(
            {"task": canary.name, "ok": is_correct(canary, timed.reply.text), "answer": timed.reply.text[:60]}
        )
        last = outcome
    assert last is not None
    correct = sum(1 for r in results if r["ok"])
    last.details.update(tasks=results, correct=correct, total=len(results))
    if correct < len(results):
        last.error_class = ErrorClass.WRONG_ANSWER
    return [last]
