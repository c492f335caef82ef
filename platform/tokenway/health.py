"""Health of the platform's components: database, Redis, Celery queues, simulated providers, processes."""

from __future__ import annotations

import json
import time
import urllib.request
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
    from routing.metrics import GATEWAYS

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
    components["usage"] = check_usage()  # reported, and degrades the status; readiness stays the two below
    healthy = components["database"].ok and components["redis"].ok
    return healthy, {
        "status": "ok" if healthy and components["usage"].ok else "degraded",
        "components": {k: v.as_dict() for k, v in components.items()},
    }
