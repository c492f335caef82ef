"""When ``make run`` may say "Tokenway is running": everything a user touches answers.

The web app's ``/healthz`` is 200 (database, Redis), the simulated providers answer,
and every Celery worker of this stack has sent its heartbeat.
"""

from __future__ import annotations

import json
import os
import socket
import urllib.error
import urllib.request

from foundation.worker_heartbeat import WORKER_HEARTBEAT_PREFIX


def worker_names(regions: list[str]) -> list[str]:
    """The node names runall gives its workers (``-n NAME@%h``)."""
    host = socket.gethostname()
    return [f"main@{host}", *(f"probe-{region}@{host}" for region in regions)]


def forget_heartbeats(redis_url: str, names: list[str]) -> None:
    """A previous run's heartbeats live on for their TTL; they must not count as this run's workers."""
    from foundation.redis_client import client_for, cluster_mode

    client = client_for(redis_url, cluster=cluster_mode(redis_url, os.environ.get("TOKENWAY_REDIS_CLUSTER", "")))
    try:
        for name in names:  # one key per call: on a cluster they live in different slots
            client.delete(f"{WORKER_HEARTBEAT_PREFIX}{name}")
    finally:
        client.close()


def not_ready(*, port: int, workers: list[str]) -> list[str]:
    """What does not answer yet (empty when the stack is ready)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=3) as response:
            body = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return [f"web (/healthz {exc.code})"]
    except (OSError, ValueError):
        return ["web"]
    components = body.get("components", {})
    missing = [] if components.get("sim", {}).get("status") == "ok" else ["sim"]
    alive = set(components.get("queues", {}).get("workers", []))
    return missing + [f"worker {name}" for name in workers if name not in alive]
