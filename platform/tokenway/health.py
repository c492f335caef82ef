"""The platform's health components, listed in one place: each check lives with what it reads
(foundation: database, Redis, queues, the dev stack's processes; evaluation: the simulated fleet;
metering: the usage pipeline with the spools of this process's gateways). Adding a component is one line
here; ``/healthz`` and ``/readyz`` list it."""

from __future__ import annotations

from typing import Any

from evaluation.health import check_sim
from foundation.health import (
    Component,
    ComponentStatus,
    check_database,
    check_processes,
    check_queues,
    check_redis,
)
from foundation.health import summary as components_summary
from foundation.health_background import BackgroundChecks
from metering.health import check_usage
from routing.telemetry.metrics import GATEWAYS


def _check_usage() -> ComponentStatus:
    return check_usage(spools=[gateway.spool.state() for gateway in GATEWAYS.running()])


COMPONENTS: list[Component] = [
    Component("database", check_database, required=True),
    Component("redis", check_redis, required=True),
    Component("queues", check_queues, interval_s=2.0),  # a SCAN of the heartbeats: not every second
    Component("sim", check_sim, interval_s=2.0),
    Component("processes", check_processes, interval_s=2.0),
    Component("usage", _check_usage, degrades=True),  # dead letters, stuck entries, billing lag, spools
]

CHECKS = BackgroundChecks(COMPONENTS)  # one per web process, started by its ASGI lifespan (tokenway.asgi)


def summary(statuses: dict[str, ComponentStatus]) -> tuple[bool, dict[str, Any]]:
    """``/healthz``'s body: healthy when every required component is ok."""
    return components_summary(statuses, COMPONENTS)


def platform_health() -> tuple[bool, dict[str, Any]]:
    """Every check now, in this thread (where the background checks do not run: the Django view, tests)."""
    statuses = {c.name: status for c in COMPONENTS if (status := c.check()) is not None}
    return summary(statuses)
