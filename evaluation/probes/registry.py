"""Probe kind -> coroutine running one probe of that kind against one offering."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from evaluation.models import ProbeKind
from evaluation.probes import cache, capability, performance, price, quality
from evaluation.probes.base import ProbeContext
from evaluation.probes.outcome import Outcome

ProbeFn = Callable[[ProbeContext], Awaitable[list[Outcome]]]

PROBES: dict[str, ProbeFn] = {
    ProbeKind.PERFORMANCE: performance.run,
    ProbeKind.CACHE: cache.run,
    ProbeKind.PRICE: price.run,
    ProbeKind.CAPABILITY: capability.run,
    ProbeKind.QUALITY: quality.run,
}
HOURLY_KINDS = (ProbeKind.CACHE, ProbeKind.PRICE, ProbeKind.CAPABILITY, ProbeKind.QUALITY)
