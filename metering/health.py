"""Metering's health component (listed by tokenway.health): the usage pipeline."""

from __future__ import annotations

from typing import Any

import redis

from foundation.health import ComponentStatus
from foundation.redis_client import get_redis
from metering.pipeline_health import usage_pipeline_state


def check_usage(*, spools: list[dict[str, Any]]) -> ComponentStatus:
    """Dead letters, stuck entries, billing lag (metering.pipeline_health), and the usage spools of the
    gateways in this process (``spools``: each one's state). A problem here degrades /healthz without failing
    it: the platform still serves; operators act on the problems listed."""
    problems = [f"usage spool unwritable ({s['held']} events held in memory)" for s in spools if not s["writable"]]
    problems += [f"{s['held']} usage events held in memory" for s in spools if s["writable"] and s["held"]]
    try:
        state = usage_pipeline_state(get_redis())
    except redis.RedisError as exc:
        return ComponentStatus(False, {"error": type(exc).__name__, "spools": spools, "problems": problems})
    problems = state.problems + problems
    status = "degraded" if problems else "ok"
    return ComponentStatus(not problems, {"status": status, **state.as_dict(), "spools": spools, "problems": problems})
