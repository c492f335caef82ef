"""The fleet's state: providers and offerings with their effective profiles, and shared runtime
state (clock, caches, rate windows, faults, request log, deterministic seeds)."""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contracts.usage import Prices
from sim.cache import PromptCache
from sim.clock import SimClock
from sim.draws import Draws, mix64, stable_hash
from sim.faults import FaultBook
from sim.fleet_spec import DEFAULT_CATALOG, OfferingSpec, load_catalog
from sim.network import DEFAULT_NETWORK, Network, load_network
from sim.profiles import DEFAULT_PROFILES, Incident, Profile, ProfileBook, load_profiles
from sim.ratelimit import RateLimiter
from sim.requestlog import RequestLog

_MAX_OCCURRENCES = 200_000


def billed_prices(published: Prices, profile: Profile) -> Prices:
    dishonesty = profile.dishonesty
    if dishonesty.billed_prices:
        return dataclasses.replace(published, **dishonesty.billed_prices)
    factor = dishonesty.billed_price_factor
    if factor == 1.0:
        return published
    scaled = {
        name: round(getattr(published, name) * factor)
        for name in ("input", "output", "cache_read", "cache_write_5m", "cache_write_1h")
    }
    return dataclasses.replace(published, **scaled)


@dataclass(slots=True)
class Offering:
    spec: OfferingSpec
    profile: Profile
    billed: Prices
    key: str  # "<provider>/<model>"
    rpm: int | None
    tpm: int | None
    slots: asyncio.Semaphore
    counters: dict[str, int] = field(default_factory=lambda: {"requests": 0, "errors": 0, "faults": 0})

    @property
    def names(self) -> tuple[str, str]:
        return (self.spec.model, self.spec.upstream_model)


@dataclass(slots=True)
class Provider:
    slug: str
    name: str
    dialect: str
    profile: Profile  # provider-level (error style, rate-limit headers, auth)
    offerings: dict[str, Offering]  # by upstream name and by public model slug

    def offering(self, model: str) -> Offering | None:
        return self.offerings.get(model)

    def unique_offerings(self) -> list[Offering]:
        return list({id(item): item for item in self.offerings.values()}.values())


class Fleet:
    def __init__(
        self,
        *,
        seed: int = 0,
        time_scale: float = 1.0,
        catalog_path: Path | str = DEFAULT_CATALOG,
        profiles_path: Path | str = DEFAULT_PROFILES,
        network_path: Path | str = DEFAULT_NETWORK,
    ) -> None:
        self.seed = seed
        self.network: Network = load_network(network_path)
        self.clock = SimClock(time_scale=time_scale)
        self.book: ProfileBook = load_profiles(profiles_path)
        self.providers = self._build(load_catalog(catalog_path))
        self.cache = PromptCache()
        self.limiter = RateLimiter()
        self.faults = FaultBook()
        self.log = RequestLog()
        self._occurrences: dict[int, int] = {}

    def _build(self, specs: dict[str, Any]) -> dict[str, Provider]:
        providers = {}
        for slug, spec in specs.items():
            offerings: dict[str, Offering] = {}
            for item in spec.offerings:
                offering = self._offering(item)
                offerings.setdefault(item.upstream_model, offering)
                offerings.setdefault(item.model, offering)
            profile = self.book.resolve(slug, "")
            providers[slug] = Provider(
                slug=slug, name=spec.name, dialect=spec.dialect, profile=profile, offerings=offerings
            )
        return providers

    def _offering(self, spec: OfferingSpec) -> Offering:
        profile = self.book.resolve(spec.provider, spec.model)
        return Offering(
            spec=spec,
            profile=profile,
            billed=billed_prices(spec.prices, profile),
            key=f"{spec.provider}/{spec.model}",
            rpm=spec.rpm,
            tpm=spec.tpm,
            slots=asyncio.Semaphore(max(1, profile.perf.capacity)),
        )

    def draws_for(self, offering: Offering, body: bytes) -> Draws:
        """Seeded per (seed, offering, body, n-th time this body reached this offering)."""
        key = mix64(stable_hash(offering.key) ^ stable_hash(body))
        count = self._occurrences.get(key, 0)
        if len(self._occurrences) > _MAX_OCCURRENCES:
            self._occurrences.clear()
        self._occurrences[key] = count + 1
        return Draws(mix64(self.seed ^ key) ^ count)

    def add_incident(self, provider: str, model: str | None, incident: Incident) -> list[str]:
        """An incident from now on (POST /_sim/incidents) on ``provider``'s offerings of ``model`` (all when
        None), beside the profile's own; returns the keys of the offerings it applies to."""
        found = self.providers.get(provider)
        if found is None:
            raise KeyError(provider)
        touched = [o for o in found.unique_offerings() if model is None or model in o.names]
        if not touched:
            raise KeyError(model)
        for offering in touched:
            offering.profile = dataclasses.replace(offering.profile, incidents=(*offering.profile.incidents, incident))
        return [o.key for o in touched]

    def clear_incidents(self, provider: str | None = None) -> None:
        """Back to the configured profiles' incidents (every provider's, or one's)."""
        for slug, item in self.providers.items():
            if provider in (None, slug):
                for offering in item.unique_offerings():
                    offering.profile = self.book.resolve(slug, offering.spec.model)

    def reset(self) -> None:
        self.clear_incidents()
        self.cache.clear()
        self.limiter.clear()
        self.faults.clear()
        self.log.clear()
        self._occurrences.clear()
        for provider in self.providers.values():
            for offering in provider.unique_offerings():
                offering.rpm, offering.tpm = offering.spec.rpm, offering.spec.tpm
                offering.counters.update(requests=0, errors=0, faults=0)
