"""When a stream's output tokens were produced: time to first token, to first answer token, and speed.

Definitions (docs/evaluation.md, "Performance"), with t0 the moment just before the request is
written and arrival times of the deltas that carry text (reasoning or answer; role-only chunks,
``message_start``, ``ping`` and signatures carry none):

- **TTFT** (time to first token, any kind): arrival of the first delta carrying reasoning or answer
  text − t0.
- **Answer TTFT** (time to first answer token): arrival of the first delta carrying answer text − t0.
- **Speed** (output tokens/s over the time they were produced), by how the reasoning reached us:
  * ``none`` / ``streamed``: (output tokens − the first delta's tokens) / (last delta − first delta).
    Output tokens are the usage's (reasoning included); the first delta's share of them is its text's
    share of all streamed text (``count_text_tokens``, reasoning and answer counted apart).
  * ``hidden`` (the usage reports reasoning tokens, none were streamed): the reasoning was produced
    before the first answer delta, unseen. Speed = (answer tokens − the first answer delta's tokens) /
    (last delta − first answer delta), answer tokens = output − reasoning; the reasoning is taken to
    have run at that speed, so TTFT = answer TTFT − (reasoning + first answer delta's tokens − 1) /
    speed (the tokens produced after the first one, up to the first answer delta), within [0, answer
    TTFT]. Without a speed (a one-delta answer) TTFT is the answer TTFT, an upper bound.
"""

from __future__ import annotations

from dataclasses import dataclass

from contracts.tokens import count_text_tokens

NONE, STREAMED, HIDDEN = "none", "streamed", "hidden"


@dataclass(slots=True)
class Arrivals:
    """Arrival times (``time.perf_counter`` seconds) and texts of a stream's text-carrying deltas."""

    first: float | None = None  # first delta with reasoning or answer text
    first_text: str = ""  # that delta's text (reasoning and answer)
    first_answer: float | None = None
    first_answer_text: str = ""
    last: float | None = None
    reasoning: str = ""  # all streamed reasoning text
    answer: str = ""  # all answer text
    chunks: int = 0  # text-carrying deltas

    def add(self, now: float, *, reasoning: str, text: str) -> None:
        if not reasoning and not text:
            return
        if self.first is None:
            self.first, self.first_text = now, reasoning + text
        if text and self.first_answer is None:
            self.first_answer, self.first_answer_text = now, text
        self.last = now
        self.reasoning += reasoning
        self.answer += text
        self.chunks += 1


@dataclass(frozen=True, slots=True)
class Speed:
    ttft_ms: float | None  # first token of any kind
    answer_ttft_ms: float | None  # first answer token
    tps: float | None  # output tokens/s while they were produced
    reasoning: str  # NONE | STREAMED | HIDDEN


def _share(tokens: float, part: str, whole: int) -> float:
    """The part of ``tokens`` a piece of text stands for, by its share of the counted text."""
    return tokens * count_text_tokens(part) / whole if whole else 0.0


def _rate(tokens: float, since: float | None, until: float | None) -> float | None:
    if since is None or until is None or until <= since or tokens <= 0:
        return None
    return tokens / (until - since)


def _ms(moment: float | None, started: float) -> float | None:
    return None if moment is None else (moment - started) * 1000


def stream_speed(arrivals: Arrivals, *, started: float, output_tokens: int, reasoning_tokens: int) -> Speed:
    answer_ttft = _ms(arrivals.first_answer, started)
    if reasoning_tokens > 0 and not arrivals.reasoning and arrivals.first_answer is not None:
        return _hidden(arrivals, answer_ttft, output_tokens - reasoning_tokens, reasoning_tokens)
    whole = count_text_tokens(arrivals.reasoning) + count_text_tokens(arrivals.answer)
    after_first = output_tokens - _share(output_tokens, arrivals.first_text, whole)
    return Speed(
        ttft_ms=_ms(arrivals.first, started),
        answer_ttft_ms=answer_ttft,
        tps=_rate(after_first, arrivals.first, arrivals.last),
        reasoning=STREAMED if arrivals.reasoning else NONE,
    )


def _hidden(arrivals: Arrivals, answer_ttft: float | None, answer_tokens: int, reasoning_tokens: int) -> Speed:
    first_tokens = _share(answer_tokens, arrivals.first_answer_text, count_text_tokens(arrivals.answer))
    tps = _rate(answer_tokens - first_tokens, arrivals.first_answer, arrivals.last)
    ttft = answer_ttft
    if tps is not None and answer_ttft is not None:
        unseen_ms = (reasoning_tokens + first_tokens - 1) / tps * 1000
        ttft = min(answer_ttft, max(0.0, answer_ttft - unseen_ms))
    return Speed(ttft_ms=ttft, answer_ttft_ms=answer_ttft, tps=tps, reasoning=HIDDEN)
