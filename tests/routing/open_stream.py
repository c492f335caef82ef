"""A stream held open while a test looks at what the gateway keeps for it, and one look at the heap.

The provider pauses 2 s half-way through its answer (a ``stall_mid_stream`` fault), on a gateway whose
idle gap (``patient_gateway`` in tests/routing/conftest.py: 5 s) outlasts the pause: the stream is surely open while the test searches the heap, even
on a loaded machine where one full garbage collection of the whole suite's heap takes a second.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import requests

from sim.server import SimHandle
from tests.routing.conftest import add_fault
from tests.routing.harness import ServerThread

PAUSE_SIM_S = 400  # x the fleet's time scale (0.005): 2 s


@contextmanager
def open_stream(
    server: ServerThread, sim: SimHandle, key: str, path: str, body: dict[str, Any]
) -> Iterator[requests.Response]:
    """Yields the response once its first bytes are here, with the rest still to come."""
    add_fault(sim, provider="*", kind="stall_mid_stream", count=1, stall_s=PAUSE_SIM_S)
    with requests.post(
        f"{server.base_url}{path}", json=body, headers={"Authorization": f"Bearer {key}"}, stream=True, timeout=30
    ) as response:
        assert response.status_code == 200, response.text
        yield response


def live(*kinds: type) -> dict[type, list[Any]]:
    """Every live object of these exact types, after one full collection (garbage is not counted).
    type(), not isinstance(): the heap holds weak proxies whose referent is gone, and isinstance() on
    one raises ReferenceError."""
    gc.collect()
    found: dict[type, list[Any]] = {kind: [] for kind in kinds}
    for obj in gc.get_objects():
        bucket = found.get(type(obj))
        if bucket is not None:
            bucket.append(obj)
    return found
