"""Seeded prompt corpus: every probe run gets fresh text (anti-gaming), reproducible from its seed.

A provider cannot recognise probe prompts by content: each run draws a new seed,
and the text is ordinary prose-like filler about ordinary topics, sized in tokens
with the same counter the gateway uses (contracts.tokens).
"""

from __future__ import annotations

import random
import secrets

from contracts.tokens import count_text_tokens

_WORDS = [
    "system",
    "service",
    "request",
    "cache",
    "latency",
    "region",
    "budget",
    "report",
    "customer",
    "invoice",
    "shipment",
    "order",
    "warehouse",
    "river",
    "mountain",
    "forest",
    "garden",
    "kitchen",
    "window",
    "station",
    "village",
    "harbor",
    "market",
    "library",
    "museum",
    "theater",
    "engine",
    "battery",
    "circuit",
    "sensor",
    "signal",
    "network",
    "server",
    "cluster",
    "queue",
    "worker",
    "thread",
    "memory",
    "storage",
    "quickly",
    "slowly",
    "carefully",
    "quietly",
    "brightly",
    "gently",
    "firmly",
    "openly",
    "rarely",
    "often",
    "always",
    "never",
    "sometimes",
    "build",
    "measure",
    "compare",
    "deliver",
    "explain",
    "improve",
    "gather",
    "inspect",
    "manage",
    "observe",
    "prepare",
    "record",
    "review",
    "green",
    "silver",
    "bright",
    "narrow",
    "ancient",
    "modern",
    "simple",
    "complex",
    "steady",
    "rapid",
    "gentle",
    "heavy",
    "light",
    "careful",
    "morning",
    "evening",
    "winter",
    "summer",
    "autumn",
    "spring",
    "weekend",
    "holiday",
    "meeting",
    "project",
    "deadline",
    "schedule",
    "plan",
    "teacher",
    "student",
    "doctor",
    "farmer",
    "pilot",
    "writer",
    "painter",
    "engineer",
    "manager",
    "analyst",
    "driver",
    "builder",
    "chef",
]
_TOPICS = (
    "a lighthouse keeper who collects maps",
    "the history of a small mountain railway",
    "planning a week of meals on a budget",
    "how a city library organises its archive",
    "a robot learning to paint landscapes",
    "the migration of birds across a continent",
    "running a bakery during a snowstorm",
    "designing a garden for a narrow balcony",
    "a detective solving a puzzle on a night train",
    "the daily routine of a harbor pilot",
)


def new_seed() -> int:
    return secrets.randbits(63)


def filler(rng: random.Random, tokens: int) -> str:
    """ASCII prose of about ``tokens`` tokens (never fewer)."""
    words: list[str] = []
    length = 0
    while (length + 3) // 4 < tokens:
        word = rng.choice(_WORDS)
        if rng.random() < 0.08:
            word += "."
        words.append(word)
        length += len(word) + 1
    text = " ".join(words)
    while count_text_tokens(text) > tokens and " " in text:
        text = text.rsplit(" ", 1)[0]
    return text


def topic(rng: random.Random) -> str:
    return rng.choice(_TOPICS)


def story_prompt(rng: random.Random, tokens: int) -> str:
    subject = topic(rng)
    head = f"Background notes (reference {rng.randrange(10**9):09d}):\n"
    tail = f"\n\nUsing the notes above only for tone, write a long story about {subject}."
    body_tokens = max(1, tokens - count_text_tokens(head) - count_text_tokens(tail))
    return head + filler(rng, body_tokens) + tail
