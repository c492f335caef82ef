"""Each Celery worker writes a short-lived heartbeat key so /healthz can list live workers."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from typing import Any

import redis
from celery.signals import worker_ready, worker_shutdown

from tokenway.health import WORKER_HEARTBEAT_PREFIX
from tokenway.redis_client import get_redis

HEARTBEAT_EVERY_S = 10  # /healthz treats a worker as gone after HEARTBEAT_TTL_S without one
HEARTBEAT_TTL_S = 30

_stop = threading.Event()


def _worker_name(sender: Any) -> str:
    hostname = getattr(sender, "hostname", None) or f"{socket.gethostname()}:{os.getpid()}"
    return str(hostname)


def _beat(name: str) -> None:
    client = get_redis()  # the data Redis (a cluster too): /metrics and health count heartbeats there
    queues = os.environ.get("TOKENWAY_REGION", "")
    while not _stop.is_set():
        with contextlib.suppress(redis.RedisError):  # Redis down: health reports it; keep trying
            client.set(f"{WORKER_HEARTBEAT_PREFIX}{name}", queues, ex=HEARTBEAT_TTL_S)
        _stop.wait(HEARTBEAT_EVERY_S)


def start_heartbeat(sender: Any = None, **_: Any) -> None:
    threading.Thread(target=_beat, args=(_worker_name(sender),), name="tw-heartbeat", daemon=True).start()


def stop_heartbeat(**_: Any) -> None:
    _stop.set()


worker_ready.connect(start_heartbeat, weak=False)
worker_shutdown.connect(stop_heartbeat, weak=False)
