"""Health of the platform's components: database, Redis, Celery queues, simulated providers, processes.

Each component is one ``Component`` in ``COMPONENTS``: a name, a check (blocking is fine: the web
process runs it on a thread of its own, ``tokenway.health_background``), whether it decides readiness, and
how often it runs. Adding a component is one line there; ``/healthz`` and ``/readyz`` list it.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis
from django.conf import settings
from django.db import connection

from tokenway.redis_client import get_broker_redis, get_redis

WORKER_HEARTBEAT_PREFIX = "tw:worker:heartbeat:"
QUEUES = ["default", "metering", "stripe"]


@dataclass
class ComponentStatus:
    ok: bool
    detail: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"status": "ok" if self.ok else "down", **self.detail}


def check_database() -> ComponentStatus:
    started = time.perf_counter()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # noqa: BLE001 - any driver failure means "down"
        connection.close()  # this thread's next check connects afresh (no request cycle closes it here)
        return ComponentStatus(False, {"error": type(exc).__name__})
    return ComponentStatus(True, {"latency_ms": round((time.perf_counter() - started) * 1000, 2)})


def check_redis() -> ComponentStatus:
    started = time.perf_counter()
    try:
        get_redis().ping()
    except Exception as exc:  # noqa: BLE001 - any client failure means "down"
        return ComponentStatus(False, {"error": type(exc).__name__})
    return ComponentStatus(True, {"latency_ms": round((time.perf_counter() - started) * 1000, 2)})


def check_queues() -> ComponentStatus:
    """Backlog per queue and which workers sent a heartbeat recently."""
    try:
        broker = get_broker_redis()  # Celery's queues are lists on the broker, not in the data Redis
        queues = [*QUEUES, *(f"probes.{region}" for region in settings.TOKENWAY_REGIONS)]
        backlog = {name: int(broker.llen(name)) for name in queues}
        workers = sorted(
            key.decode().removeprefix(WORKER_HEARTBEAT_PREFIX)
            for key in get_redis().scan_iter(f"{WORKER_HEARTBEAT_PREFIX}*")
        )
    except Exception as exc:  # noqa: BLE001
        return ComponentStatus(False, {"error": type(exc).__name__})
    return ComponentStatus(True, {"backlog": backlog, "workers": workers})


def check_sim() -> ComponentStatus:
    try:
        with urllib.request.urlopen(f"{settings.SIM_BASE_URL}/_sim/health", timeout=1) as response:  # noqa: S310 - loopback URL from settings
            return ComponentStatus(response.status == 200, {"url": settings.SIM_BASE_URL})
    except OSError as exc:
        return ComponentStatus(False, {"error": type(exc).__name__, "url": settings.SIM_BASE_URL})


def check_processes() -> ComponentStatus | None:
    """The ``make run`` supervisor's process table (absent outside the dev stack)."""
    table = Path(settings.DATA_DIR) / "processes.json"
    try:
        body = json.loads(table.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        return ComponentStatus(False, {"error": type(exc).__name__})
    processes = body.get("processes", [])
    ok = all(row.get("state") == "running" for row in processes)
    return ComponentStatus(ok, {"supervisor_pid": body.get("supervisor_pid"), "processes": processes})


def check_usage() -> ComponentStatus:
    """The usage pipeline: dead letters, stuck entries, billing lag (metering.pipeline_health), and the
    usage spool of each gateway in this process. A problem here degrades /healthz without failing it:
    the platform still serves; operators act on the problems listed."""
    # Imported here: devtools.stack_ready imports this module before Django is set up.
    from metering.pipeline_health import usage_pipeline_state
    from routing.telemetry.metrics import GATEWAYS

    spools = [gateway.spool.state() for gateway in GATEWAYS.running()]
    problems = [f"usage spool unwritable ({s['held']} events held in memory)" for s in spools if not s["writable"]]
    problems += [f"{s['held']} usage events held in memory" for s in spools if s["writable"] and s["held"]]
    try:
        state = usage_pipeline_state(get_redis())
    except redis.RedisError as exc:
        return ComponentStatus(False, {"error": type(exc).__name__, "spools": spools, "problems": problems})
    problems = state.problems + problems
    status = "degraded" if problems else "ok"
    return ComponentStatus(not problems, {"status": status, **state.as_dict(), "spools": spools, "problems": problems})


@dataclass(frozen=True)
class Component:
    name: str
    check: Callable[[], ComponentStatus | None]  # None: not part of this deployment (left out)
    required: bool = False  # down (or not checked yet) -> /healthz and /readyz answer 503
    interval_s: float = 1.0  # between the end of one check and the start of the next
    degrades: bool = False  # not ok -> status "degraded" while /healthz still answers 200


COMPONENTS: list[Component] = [
    Component("database", check_database, required=True),
    Component("redis", check_redis, required=True),
    Component("queues", check_queues, interval_s=2.0),  # a SCAN of the heartbeats: not every second
    Component("sim", check_sim, interval_s=2.0),
    Component("processes", check_processes, interval_s=2.0),
    Component("usage", check_usage, degrades=True),  # dead letters, stuck entries, billing lag, spools
]


def summary(statuses: dict[str, ComponentStatus]) -> tuple[bool, dict[str, Any]]:
    """``/healthz``'s body: healthy when every required component is ok."""
    required = {c.name for c in COMPONENTS if c.required}
    healthy = all(statuses[name].ok if name in statuses else False for name in required)
    degraded = any(not statuses[c.name].ok for c in COMPONENTS if c.degrades and c.name in statuses)
    return healthy, {
        "status": "ok" if healthy and not degraded else "degraded",
        "components": {name: status.as_dict() for name, status in statuses.items()},
    }


def platform_health() -> tuple[bool, dict[str, Any]]:
    """Every check now, in this thread (where the background checks do not run: the Django view, tests)."""
    statuses = {c.name: status for c in COMPONENTS if (status := c.check()) is not None}
    return summary(statuses)
