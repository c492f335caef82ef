"""What /_sim/profiles shows: the effective profile and prices of every offering (ground truth)."""

from __future__ import annotations

import dataclasses
from typing import Any

from sim.fleet import Fleet, Offering, Provider
from sim.perf import active_incidents, expected


def offering_view(fleet: Fleet, offering: Offering) -> dict[str, Any]:
    spec, profile = offering.spec, offering.profile
    return {
        "key": offering.key,
        "provider": spec.provider,
        "model": spec.model,
        "upstream_model": spec.upstream_model,
        "dialect": spec.dialect,
        "usage_dialect": spec.usage_dialect,
        "cached_tokens_in_input": spec.cached_tokens_in_input,
        "cache_policy": spec.cache_policy,
        "cache_ttl_s": spec.cache_ttl_s,
        "keeps_billing_block": spec.keeps_billing_block,
        "context_window": spec.context_window,
        "max_output": spec.max_output,
        "parameters": list(spec.parameters),
        "status": spec.status,
        "rpm": offering.rpm,
        "tpm": offering.tpm,
        "published_prices": dataclasses.asdict(spec.prices),
        "billed_prices": dataclasses.asdict(offering.billed),
        "perf": dataclasses.asdict(profile.perf),
        "expected": expected(profile, fleet.clock),
        "cache": dataclasses.asdict(profile.cache),
        "faults": dict(profile.faults),
        "stall_s": profile.stall_s,
        "drip_factor": profile.drip_factor,
        "dishonesty": dataclasses.asdict(profile.dishonesty),
        "drift": list(profile.drift),
        "tz_offset_h": profile.tz_offset_h,
        "incidents": [dataclasses.asdict(item) for item in profile.incidents],
        "active_incidents": [dataclasses.asdict(item) for item in active_incidents(profile, fleet.clock)],
        "reasoning": profile.reasoning,
        "reasoning_field": profile.reasoning_field,  # None: hidden, only counted in the usage
        "output_tokens": list(profile.output_tokens),
        "counters": dict(offering.counters),
    }


def provider_view(fleet: Fleet, provider: Provider) -> dict[str, Any]:
    return {
        "name": provider.name,
        "dialect": provider.dialect,
        "error_style": provider.profile.error_style,
        "ratelimit_headers": provider.profile.ratelimit_headers,
        "require_auth": provider.profile.require_auth,
        "offerings": {item.spec.model: offering_view(fleet, item) for item in provider.unique_offerings()},
    }


def fleet_view(fleet: Fleet, provider: str | None = None) -> dict[str, Any]:
    providers = {slug: item for slug, item in fleet.providers.items() if provider in (None, slug)}
    return {
        "seed": fleet.seed,
        "time_scale": fleet.clock.time_scale,
        "sim_time_s": fleet.clock.now(),
        "providers": {slug: provider_view(fleet, item) for slug, item in providers.items()},
    }
