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


def _upper(rng: random.Random) -> Canary:
    word = _word(rng, 10)
    return Canary("uppercase", f"Convert '{word}' to upper case. Reply with the result only.", word.upper())


def _sort(rng: random.Random) -> Canary:
    numbers = rng.sample(range(1, 100), 5)
    listed = ", ".join(map(str, numbers))
    return Canary(
        "sort",
        f"Sort these numbers in ascending order: {listed}. Reply with the numbers separated by ', ' only.",
        ", ".join(map(str, sorted(numbers))),
    )


TASKS: tuple[Callable[[random.Random], Canary], ...] = (_multiply, _add, _reverse, _upper, _sort)


def draw(rng: random.Random) -> list[Canary]:
    return [task(rng) for task in TASKS]


def is_correct(canary: Canary, answer: str) -> bool:
    cleaned = answer.strip().strip("'\"`").rstrip(".").strip()
    return cleaned == canary.expected
