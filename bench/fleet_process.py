"""The simulated fleet in a process of its own for the evaluation benches, and JSON over HTTP to its
control endpoints (``/_sim/...``)."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request

import orjson

from devtools.ports import free_port

CLEAN_HOUR = 7  # an hour with no drift in any provider's profile


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url) as response:
        return orjson.loads(response.read())


def post_json(url: str, body: dict) -> dict:
    request = urllib.request.Request(
        url, data=orjson.dumps(body), method="POST", headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request) as response:
        return orjson.loads(response.read())


def spawn_fleet(*flags: str) -> tuple[subprocess.Popen, str]:
    """The fleet in its own process (its own core and GIL), as `python -m sim` runs it."""
    port = free_port()
    fleet = subprocess.Popen(
        [sys.executable, "-m", "sim", "--port", str(port), *flags], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    base_url = f"http://127.0.0.1:{port}"
    wait_for(f"{base_url}/_sim/health")
    return fleet, base_url


def wait_for(url: str) -> None:
    for _ in range(100):
        try:
            get_json(url)
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer")
