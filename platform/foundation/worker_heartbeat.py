"""Each Celery worker writes a short-lived heartbeat key so /healthz and /metrics can count live workers.

Connected to the worker's signals by the Celery app (tokenway.celery)."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from typing import Any

import redis

from contracts.env import env_str
from foundation.redis_client import get_redis

WORKER_HEARTBEAT_PREFIX = "tw:worker:heartbeat:"
HEARTBEAT_EVERY_S = 10  # /healthz treats a worker as gone after HEARTBEAT_TTL_S without one
HEARTBEAT_TTL_S = 30

_stop = threading.Event()


def _worker_name(sender: Any) -> str:
    hostname = getattr(sender, "hostname", None) or f"{socket.gethostname()}:{os.getpid()}"
    return str(hostname)


def _beat(name: str) -> None:
    client = get_redis()  # the data Redis (a cluster too): /metrics and health count heartbeats there
    queues = env_str("TOKENWAY_REGION")
    while not _stop.is_set():
        with contextlib.suppress(redis.RedisError):  # Redis down: health reports it; keep trying
            client.set(f"{WORKER_HEARTBEAT_PREFIX}{name}", queues, ex=HEARTBEAT_TTL_S)
        _stop.wait(HEARTBEAT_EVERY_S)


def start_heartbeat(sender: Any = None, **_: Any) -> None:
    threading.Thread(target=_beat, args=(_worker_name(sender),), name="tw-heartbeat", daemon=True).start()


def stop_heartbeat(**_: Any) -> None:
    _stop.set()


def workers_alive(client: redis.Redis) -> int:
    return sum(1 for _ in client.scan_iter(f"{WORKER_HEARTBEAT_PREFIX}*"))
