"""Deterministic, cheap random draws (splitmix64) seeded per request.

``random.Random`` seeding costs more than a whole fast-path request; a few
splitmix64 steps are enough for latency, content and fault draws.
"""

from __future__ import annotations

import math
import zlib

_MASK = (1 << 64) - 1


def mix64(value: int) -> int:
    value = (value + 0x9E3779B97F4A7C15) & _MASK
    value = ((value ^ (value >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    value = ((value ^ (value >> 27)) * 0x94D049BB133111EB) & _MASK
    return value ^ (value >> 31)


def stable_hash(data: bytes | str) -> int:
    """Process-independent hash (Python's ``hash`` is salted per process)."""
    raw = data.encode() if isinstance(data, str) else data
    return zlib.crc32(raw) | (zlib.adler32(raw) << 32)


class Draws:
    __slots__ = ("_state",)

    def __init__(self, seed: int) -> None:
        self._state = seed & _MASK

    def u64(self) -> int:
        self._state = (self._state + 0x9E3779B97F4A7C15) & _MASK
        return mix64(self._state)

    def uniform(self) -> float:
        return (self.u64() >> 11) * (1.0 / 9007199254740992.0)

    def below(self, n: int) -> int:
        return self.u64() % n if n > 0 else 0

    def chance(self, probability: float) -> bool:
        return probability > 0 and self.uniform() < probability

    def normal(self) -> float:
        u1 = max(self.uniform(), 1e-12)
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * self.uniform())

    def lognormal(self, median: float, sigma: float) -> float:
        return median * math.exp(sigma * self.normal()) if sigma > 0 else median

    def hex_id(self, length: int = 24) -> str:
        text = f"{self.u64():016x}{self.u64():016x}"
        return text[:length]
