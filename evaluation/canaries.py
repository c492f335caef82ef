"""Quality canaries: small tasks with one checkable answer, drawn fresh per run from a seed.

A full-quality model gets them right; a quantised or substituted variant starts
failing them. Answers are compared after trimming whitespace, quotes and a final period.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True, slots=True)
class Canary:
    name: str
    prompt: str
    expected: str


def _word(rng: random.Random, length: int) -> str:
    return "".join(rng.choice(_LETTERS) for _ in range(length))


def _multiply(rng: random.Random) -> Canary:
    a, b = rng.randint(12, 99), rng.randint(12, 99)
    return Canary("arithmetic", f"What is {a} * {b}? Reply with the number only.", str(a * b))


def _add(rng: random.Random) -> Canary:
    a, b = rng.randint(1000, 9999), rng.randint(1000, 9999)
    return Canary("addition", f"What is {a} + {b}? Reply with the number only.", str(a + b))


def _reverse(rng: random.Random) -> Canary:
    word = _word(rng, 8)
    return Canary("reverse", f"Reverse the string '{word}'. Reply with the reversed string only.", word[::-1])


_CAPITALS = {
    "France": "Paris",
    "Japan": "Tokyo",
    "Kenya": "Nairobi",
    "Norway": "Oslo",
    "Egypt": "Cairo",
    "Canada": "Ottawa",
    "Italy": "Rome",
}


def _capital(rng: random.Random) -> Canary:
    country = rng.choice(sorted(_CAPITALS))
    return Canary("capital", f"What is the capital of {country}? Reply with the city name only.", _CAPITALS[country])


def _length(rng: random.Random) -> Canary:
    word = _word(rng, rng.randint(5, 14))
    return Canary("length", f"How many letters are in the word '{word}'? Reply with the number only.", str(len(word)))


TASKS: tuple[Callable[[random.Random], Canary], ...] = (_multiply, _add, _reverse, _capital, _length)


def draw(rng: random.Random) -> list[Canary]:
    return [task(rng) for task in TASKS]


def is_correct(canary: Canary, answer: str) -> bool:
    cleaned = answer.strip().strip("'\"`").rstrip(".").strip()
    return cleaned == canary.expected
