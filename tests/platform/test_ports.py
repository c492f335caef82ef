"""Ports for servers the platform starts itself are picked below the kernel's ephemeral range, so
no outgoing connection's local port can take one before the server binds it."""

from __future__ import annotations

import socket

from devtools.ports import LOWEST, ephemeral_start, free_port


def test_picked_ports_are_free_and_below_the_ephemeral_range():
    start = ephemeral_start()
    with open("/proc/sys/net/ipv4/ip_local_port_range") as ranges:
        assert start == int(ranges.read().split()[0])
    for _ in range(100):
        port = free_port()
        assert LOWEST <= port < start
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))
    assert all(free_port(below=20_000) < 20_000 for _ in range(100))


def test_with_no_room_below_the_range_the_kernel_picks():
    assert 0 < free_port(below=LOWEST + 10) <= 65_535
