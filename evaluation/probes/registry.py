"""Probe kind -> coroutine running one probe of that kind against one offering.

An embedding offering (``embeddings`` in its parameters) serves no chat: it gets the embedding probe in
the performance and price kinds (probes/embedding.py) and none of the others."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from contracts.snapshot import OfferingSnapshot
from evaluation.models import ProbeKind
from evaluation.probes import cache, capability, embedding, performance, price, quality
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
EMBEDDING_PROBES: dict[str, ProbeFn] = {
    ProbeKind.PERFORMANCE: embedding.run_performance,
    ProbeKind.PRICE: embedding.run_price,
}
EMBEDDINGS = "embeddings"  # the parameter an embedding offering declares (docs/catalog-format.md)


def is_embedding(offering: OfferingSnapshot) -> bool:
    return EMBEDDINGS in offering.parameters


def probe_for(kind: str, offering: OfferingSnapshot) -> ProbeFn | None:
    """The probe of this kind for this offering, or None when the kind does not apply to it."""
    return (EMBEDDING_PROBES if is_embedding(offering) else PROBES).get(kind)


def kinds_for(*, embedding_offering: bool) -> tuple[str, ...]:
    """Every probe kind scheduled for an offering, performance first."""
    return tuple(EMBEDDING_PROBES) if embedding_offering else (ProbeKind.PERFORMANCE, *HOURLY_KINDS)
