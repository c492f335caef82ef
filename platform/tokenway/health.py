"""Health of the platform's components: database, Redis, Celery queues, simulated providers, processes."""

from __future__ import annotations

import json
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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


def platform_health() -> tuple[bool, dict[str, Any]]:
    """Database and Redis decide readiness; queues, the simulator and processes are reported."""
    components = {
        "database": check_database(),
        "redis": check_redis(),
        "queues": check_queues(),
        "sim": check_sim(),
    }
    processes = check_processes()
    if processes is not None:
        components["processes"] = processes
    healthy = components["database"].ok and components["redis"].ok
    return healthy, {
        "status": "ok" if healthy else "degraded",
        "components": {k: v.as_dict() for k, v in components.items()},
    }
