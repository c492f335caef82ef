"""The metrics page this process serves: set once by the project package (``tokenway.metrics``, which
puts every domain's figures on it), read by what serves it (``/metrics``, a worker's own port).
Until it is set, the page is this process's own figures (Python process and GC)."""

from __future__ import annotations

from prometheus_client import REGISTRY, CollectorRegistry

_PAGE: list[CollectorRegistry] = []


def process_page_set(page: CollectorRegistry) -> None:
    _PAGE[:] = [page]


def process_page() -> CollectorRegistry:
    return _PAGE[0] if _PAGE else REGISTRY
