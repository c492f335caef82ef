"""Loopback ports for the servers the platform starts itself (dev stack, offline Stripe, tests).

A port picked for a server that binds it later is taken below the kernel's ephemeral range: the
local port of an outgoing connection (a test suite opens thousands) comes from that range, and one
could take the port between the pick and the server's bind.
"""

from __future__ import annotations

import random
import socket
import time
from pathlib import Path

LOWEST = 10_000  # above the well-known and registered ports servers here commonly use


def ephemeral_start() -> int:
    """Where the kernel's range of local ports for outgoing connections starts."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768  # Linux's default


def free_port(below: int | None = None) -> int:
    """A port free now, from LOWEST up to ``below`` (default: the ephemeral range's start)."""
    top = (below if below is not None else ephemeral_start()) - 1
    for _ in range(200 if top - LOWEST >= 1_000 else 0):
        port = random.randint(LOWEST, top)
        if port_is_free(port):
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:  # no room below the range: the kernel's pick
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, timeout: float = 15.0) -> None:
    """Block until something accepts connections on 127.0.0.1:port, or raise after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listened on port {port} within {timeout}s")


def port_is_free(port: int) -> bool:
    """Whether 127.0.0.1:port can be bound now (a preferred default port may be taken)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True
