"""Celery task outcomes and the CPU their runs took, counted in Redis so every worker's figures (prefork children included) reach
``/metrics`` wherever it is scraped; and each worker's own ``/metrics`` port when one is configured.

Connected to the worker's signals by the Celery app (tokenway.celery)."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from typing import Any

import redis

from contracts.env import env_str
from foundation.process_page import process_page
from foundation.redis_client import get_redis

log = logging.getLogger(__name__)

TASK_OUTCOMES = "tw:metrics:tasks"  # hash: "<task name>|<state>" -> count since the data was created
TASK_CPU = "tw:metrics:task_cpu"  # hash: "<task name>" -> CPU seconds its runs took, since the data was created

# The CPU clock of the thread a task runs in, read when it starts: a task runs start to end in one thread
# (prefork child or thread pool), so the difference at its end is its own CPU, event loop included.
_started = threading.local()


def count_outcome(task_name: str, state: str, cpu_s: float | None = None) -> None:
    with contextlib.suppress(redis.RedisError):  # a metric never fails a task
        client = get_redis()
        client.hincrby(TASK_OUTCOMES, f"{task_name}|{state}", 1)
        if cpu_s is not None:
            client.hincrbyfloat(TASK_CPU, task_name, cpu_s)


def task_cpu(client: redis.Redis) -> dict[str, float]:
    raw: dict[bytes | str, bytes | str] = client.hgetall(TASK_CPU)
    return {(k.decode() if isinstance(k, bytes) else k): float(v) for k, v in raw.items()}


def task_outcomes(client: redis.Redis) -> dict[tuple[str, str], int]:
    raw: dict[bytes | str, bytes | str] = client.hgetall(TASK_OUTCOMES)
    out: dict[tuple[str, str], int] = {}
    for field, count in raw.items():
        name, _, state = (field.decode() if isinstance(field, bytes) else field).rpartition("|")
        out[(name, state)] = int(count)
    return out


def on_task_prerun(**_: Any) -> None:
    _started.cpu_s = time.thread_time()


def on_task_postrun(sender: Any = None, state: str | None = None, **_: Any) -> None:
    name = getattr(sender, "name", None) or "unknown"
    started: float | None = getattr(_started, "cpu_s", None)
    _started.cpu_s = None
    cpu_s = None if started is None else time.thread_time() - started
    count_outcome(str(name), (state or "UNKNOWN").lower(), cpu_s)


def serve_process_metrics(**_: Any) -> Any:
    """``TOKENWAY_METRICS_PORT``: this process serves /metrics on that loopback port (a scraper on the
    host); returns the server (None when no port is set or it is taken)."""
    port = env_str("TOKENWAY_METRICS_PORT")
    if not port:
        return None
    from prometheus_client import start_http_server

    try:
        server, _thread = start_http_server(int(port), addr="127.0.0.1", registry=process_page())
    except OSError as exc:
        log.warning("metrics port %s not served: %s", port, exc)
        return None
    return server
