"""Health checks: the shape of a component and its status, the verdict over them, and the checks of the
infrastructure every app shares (database, Redis, Celery queues, the dev stack's process table).

Each domain writes the checks of what it owns beside its code (``metering.health``, ``evaluation.health``);
the project package lists them all in one ``COMPONENTS`` (``tokenway.health``). A check may block: the web
process runs each on a thread of its own (``foundation.health_background``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection

from foundation.redis_client import get_broker_redis, get_redis
from foundation.worker_heartbeat import WORKER_HEARTBEAT_PREFIX

QUEUES = ["default", "metering", "stripe"]


@dataclass
class ComponentStatus:
    ok: bool
    detail: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"status": "ok" if self.ok else "down", **self.detail}


@dataclass(frozen=True)
class Component:
    name: str
    check: Callable[[], ComponentStatus | None]  # None: not part of this deployment (left out)
    required: bool = False  # down (or not checked yet) -> /healthz and /readyz answer 503
    interval_s: float = 1.0  # between the end of one check and the start of the next
    degrades: bool = False  # not ok -> status "degraded" while /healthz still answers 200


def summary(statuses: dict[str, ComponentStatus], components: list[Component]) -> tuple[bool, dict[str, Any]]:
    """``/healthz``'s body: healthy when every required component is ok."""
    required = {c.name for c in components if c.required}
    healthy = all(statuses[name].ok if name in statuses else False for name in required)
    degraded = any(not statuses[c.name].ok for c in components if c.degrades and c.name in statuses)
    return healthy, {
        "status": "ok" if healthy and not degraded else "degraded",
        "components": {name: status.as_dict() for name, status in statuses.items()},
    }


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
