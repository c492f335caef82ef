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
    """Words of a corpus laid end to end; a slice of it is one generated text."""

    def __init__(self, sentences: tuple[str, ...]) -> None:
        words = [word + " " for sentence in sentences for word in sentence.split(" ")]
        self.words = words + words  # doubled so any start can run one full cycle
        self.size = len(words)
        self.ends: list[int] = []
        total = 0
        for word in self.words:
            total += len(word)
            self.ends.append(total)

    def take(self, draws: Draws, approx_tokens: int) -> list[str]:
        """Pieces (one word each) whose text is about ``approx_tokens`` long, at a seeded start."""
        start = draws.below(self.size)
        before = self.ends[start - 1] if start else 0
        want = before + max(1, approx_tokens) * 4
        stop = bisect.bisect_left(self.ends, want, lo=start) + 1
        pieces = self.words[start:stop]
        while sum(map(len, pieces)) < approx_tokens * 4:  # longer than one cycle
            pieces = pieces + self.words[: self.size]
        return pieces


ANSWERS = Tape(CORPUS)
THOUGHTS = Tape(REASONING)


def fit_tokens(pieces: list[str], max_tokens: int) -> tuple[list[str], bool]:
    """Cut pieces so the text stays within ``max_tokens`` (4 ASCII chars a token); True if cut."""
    budget = max_tokens * 4
    used = 0
    for index, piece in enumerate(pieces):
        weight = len(piece) if piece.isascii() else len(piece) * 4
        if used + weight > budget:
            return pieces[:index] or [piece[: max(1, budget)]], True
        used += weight
    return pieces, False


def split_text(text: str, size: int = 16) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]
