"""Prompt caches per offering: prefix chains of segment hashes with TTLs.

Key policies: ``normalized`` hashes each segment's content-only material, ``raw_prefix``
its bytes as received (so a changing billing block at system[0] or a re-shaped earlier
message changes every later key), ``none`` never caches.

Modes: ``automatic`` (OpenAI/DeepSeek style: every prefix boundary at or above the minimum
is written; a read is the longest stored prefix, rounded down to whole blocks) and
``explicit`` (Anthropic style: entries are written only at cache_control breakpoints; a read
is the longest stored prefix at any block boundary up to the last breakpoint).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from sim.profiles import CacheProfile
from sim.prompt import Prompt

_SWEEP_EVERY = 4096
_TTL_S = {"5m": 300.0, "1h": 3600.0}


@dataclass(frozen=True, slots=True)
class CacheOutcome:
    read: int = 0
    write_5m: int = 0
    write_1h: int = 0

    @property
    def writes(self) -> int:
        return self.write_5m + self.write_1h


NO_CACHE = CacheOutcome()


def _chain(namespace: bytes, prompt: Prompt, raw: bool) -> list[tuple[bytes, int]]:
    digest = hashlib.blake2b(namespace, digest_size=16).digest()
    cumulative = 0
    chain = []
    for segment in prompt.segments:
        digest = hashlib.blake2b(digest + (segment.raw if raw else segment.norm), digest_size=16).digest()
        cumulative += segment.tokens
        chain.append((digest, cumulative))
    return chain


class PromptCache:
    def __init__(self) -> None:
        self._expiry: dict[bytes, float] = {}
        self._inserts = 0

    def clear(self) -> None:
        self._expiry.clear()

    def __len__(self) -> int:
        return len(self._expiry)

    def apply(
        self, namespace: bytes, prompt: Prompt, *, policy: str, spec: CacheProfile, ttl_s: float, now: float
    ) -> CacheOutcome:
        if policy == "none" or prompt.tokens < spec.min_tokens:
            return NO_CACHE
        chain = _chain(namespace, prompt, raw=policy == "raw_prefix")
        if spec.mode == "explicit":
            return self._explicit(prompt, chain, spec, now)
        return self._automatic(chain, spec, ttl_s, now)

    def _valid(self, key: bytes, now: float) -> bool:
        expiry = self._expiry.get(key)
        return expiry is not None and expiry > now

    def _store(self, key: bytes, until: float) -> None:
        self._expiry[key] = max(until, self._expiry.get(key, 0.0))
        self._inserts += 1
        if self._inserts % _SWEEP_EVERY == 0:
            self._sweep(until - 3600.0)

    def _sweep(self, now: float) -> None:
        for key in [key for key, expiry in self._expiry.items() if expiry <= now]:
            del self._expiry[key]

    def _automatic(self, chain: list[tuple[bytes, int]], spec: CacheProfile, ttl_s: float, now: float) -> CacheOutcome:
        hit = next(
            (tokens for key, tokens in reversed(chain) if tokens >= spec.min_tokens and self._valid(key, now)), 0
        )
        for key, tokens in chain:
            if tokens >= spec.min_tokens:
                self._store(key, now + ttl_s)
        block = max(1, spec.block_tokens)
        return CacheOutcome(read=hit // block * block)

    def _explicit(self, prompt: Prompt, chain: list[tuple[bytes, int]], spec: CacheProfile, now: float) -> CacheOutcome:
        breakpoints = [index for index, segment in enumerate(prompt.segments) if segment.ttl]
        if not breakpoints or chain[breakpoints[-1]][1] < spec.min_tokens:
            return NO_CACHE
        hit = 0
        for key, tokens in reversed(chain[: breakpoints[-1] + 1]):
            if self._valid(key, now):
                hit = tokens
                self._store(key, now + 300.0)  # a read refreshes the entry
                break
        writes = {"5m": 0, "1h": 0}
        covered = hit
        for index in breakpoints:
            key, tokens = chain[index]
            ttl = prompt.segments[index].ttl or "5m"
            ttl = ttl if ttl in _TTL_S else "5m"
            if tokens > covered:
                writes[ttl] += tokens - covered
                covered = tokens
            self._store(key, now + _TTL_S[ttl])
        return CacheOutcome(read=hit, write_5m=writes["5m"], write_1h=writes["1h"])
