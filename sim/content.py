"""Generated answers from a small built-in corpus, precomputed once into a word tape."""

from __future__ import annotations

import bisect

from sim.draws import Draws

CORPUS = (
    "The request was processed by a simulated provider that speaks the real wire format.",
    "Latency depends on the queue, the hour of the day and the length of the uncached prompt.",
    "Prompt caching lets a provider reuse the work it already did for an identical prefix.",
    "A careful router compares measured speed, price and quality before it picks an offering.",
    "Tokens are counted with one shared approximation so that every side agrees on the numbers.",
    "Streaming answers arrive as a sequence of small chunks followed by a final usage record.",
    "Rate limits protect a provider from bursts and tell the client when to try again.",
    "Good tests start a real server on loopback and speak to it with the official clients.",
    "The weather in the mountains changes quickly, so travellers carry an extra layer.",
    "Rivers carve valleys over thousands of years while cities grow along their banks.",
    "A small library of well named functions is easier to read than one enormous module.",
    "Every invoice line should match the usage that the provider reported for the request.",
    "Engineers measure before they optimise, and they write the numbers down with the command.",
    "Tea and dumplings make a fine lunch on a cold afternoon in the old part of town.",
    "When a dependency fails, the caller should retry only when the failure is retryable.",
    "Quality canaries ask questions with known answers and compare what comes back.",
    "深度求索和月之暗面都提供兼容接口的模型服务。",
    "A deterministic seed makes a simulation repeat itself exactly, which tests rely on.",
    "Night traffic is lighter for some providers and heavier for others in another time zone.",
    "The gateway streams bytes to the client as soon as the upstream produces them.",
)
REASONING = (
    "Let me think about what the user is asking and which facts matter here.",
    "First I restate the question, then I check each step before I answer.",
    "The simplest answer that fits the question is probably the right one.",
    "I should keep the final answer short and make sure it is correct.",
)


class Tape:
    """Words of a corpus laid end to end; a slice of it is one generated text.

    Prefix sums of ASCII and other characters give the exact contracts.tokens count of any
    slice in O(1), so the hot path never scans the generated text.
    """

    def __init__(self, sentences: tuple[str, ...], repeat: int = 8) -> None:
        words = [word + " " for sentence in sentences for word in sentence.split(" ")]
        self.size = len(words)
        self.words = words * repeat
        self.ascii = [0]
        self.other = [0]
        for word in self.words:
            non_ascii = sum(1 for ch in word if ord(ch) >= 128)
            self.ascii.append(self.ascii[-1] + len(word) - non_ascii)
            self.other.append(self.other[-1] + non_ascii)

    def tokens(self, start: int, stop: int) -> int:
        return (self.ascii[stop] - self.ascii[start] + 3) // 4 + self.other[stop] - self.other[start]

    def take(self, draws: Draws, approx_tokens: int, max_tokens: int | None = None) -> tuple[list[str], int, bool]:
        """Pieces (one word each) of about ``approx_tokens`` tokens at a seeded start.

        Returns the pieces, their exact token count and whether ``max_tokens`` cut them short.
        """
        start = draws.below(self.size)
        span = range(start + 1, len(self.words) + 1)
        stop = span[min(len(span) - 1, bisect.bisect_left(span, approx_tokens, key=lambda j: self.tokens(start, j)))]
        cut = max_tokens is not None and self.tokens(start, stop) > max_tokens
        if cut:
            stop = start + max(1, bisect.bisect_right(span, max_tokens or 0, key=lambda j: self.tokens(start, j)))
        return self.words[start:stop], self.tokens(start, stop), cut


ANSWERS = Tape(CORPUS)
THOUGHTS = Tape(REASONING)


def split_text(text: str, size: int = 16) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]
