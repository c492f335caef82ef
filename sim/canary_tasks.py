"""Checkable tasks for quality canaries: recognise the question, know the right answer.

The honest model answers them exactly; a quantized variant gets them wrong with the
profile's ``wrong_answer_rate``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sim.draws import Draws

CAPITALS = {
    "france": "Paris",
    "germany": "Berlin",
    "italy": "Rome",
    "spain": "Madrid",
    "japan": "Tokyo",
    "china": "Beijing",
    "india": "New Delhi",
    "brazil": "Brasília",
    "canada": "Ottawa",
    "australia": "Canberra",
    "egypt": "Cairo",
    "kenya": "Nairobi",
    "mexico": "Mexico City",
    "russia": "Moscow",
    "south korea": "Seoul",
    "united kingdom": "London",
    "united states": "Washington, D.C.",
    "argentina": "Buenos Aires",
    "turkey": "Ankara",
    "norway": "Oslo",
}
_ARITH = re.compile(r"what is (-?\d{1,9})\s*([-+*x×])\s*(-?\d{1,9})", re.IGNORECASE)
_REVERSE = re.compile(r"reverse (?:the )?(?:string|word|text)?\s*:?\s*[\"'“]([^\"'”\n]{1,200})[\"'”]", re.IGNORECASE)
_CAPITAL = re.compile(r"capital (?:city )?of ([a-z][a-z .'-]{1,40}?)\s*\?", re.IGNORECASE)
_LENGTH = re.compile(
    r"how many (?:letters|characters) (?:are )?in (?:the (?:word|string) )?[\"'“]([^\"'”\n]{1,200})[\"'”]",
    re.IGNORECASE,
)
_OPS: dict[str, Callable[[int, int], int]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "x": lambda a, b: a * b,
    "×": lambda a, b: a * b,
}


def _arith(match: re.Match[str], wrong: bool, draws: Draws) -> str:
    value = _OPS[match.group(2).lower()](int(match.group(1)), int(match.group(3)))
    return str(value + 1 + draws.below(9) if wrong else value)


def _reverse(match: re.Match[str], wrong: bool, draws: Draws) -> str:
    text = match.group(1)[::-1]
    if wrong and len(text) > 1:
        return text[1] + text[0] + text[2:] if text[0] != text[1] else text[:-1]
    return text + "x" if wrong else text


def _capital(match: re.Match[str], wrong: bool, draws: Draws) -> str | None:
    country = match.group(1).strip().lower().removeprefix("the ")
    if country not in CAPITALS:
        return None
    if wrong:
        others = sorted(set(CAPITALS.values()) - {CAPITALS[country]})
        return others[draws.below(len(others))]
    return CAPITALS[country]


def _length(match: re.Match[str], wrong: bool, draws: Draws) -> str:
    return str(len(match.group(1)) + (1 if wrong else 0))


_TASKS = ((_ARITH, _arith), (_REVERSE, _reverse), (_CAPITAL, _capital), (_LENGTH, _length))


def answer(text: str, *, wrong_rate: float, draws: Draws) -> str | None:
    """The answer to a recognised task in ``text`` (None when it is not one)."""
    if len(text) > 4000:
        return None
    for pattern, solve in _TASKS:
        match = pattern.search(text)
        if match:
            return solve(match, draws.chance(wrong_rate), draws)
    return None
