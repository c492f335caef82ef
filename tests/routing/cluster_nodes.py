"""Operator moves on a test Redis Cluster (devtools.redis_cluster): which node serves a slot, moving a
slot with its keys to another master (the MOVED case), half-moving it (the ASK case), stopping a node."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from urllib.parse import urlparse

import redis


@dataclass
class Node:
    port: int
    node_id: str
    client: redis.Redis


def nodes(url: str) -> list[Node]:
    """The masters of the cluster ``url`` names, by port."""
    seed = redis.Redis(host="127.0.0.1", port=urlparse(url).port or 6379)
    ports = sorted({int(entry[2][1]) for entry in seed.execute_command("CLUSTER SLOTS")})
    seed.close()
    found = []
    for port in ports:
        client = redis.Redis(host="127.0.0.1", port=port)
        found.append(Node(port, client.execute_command("CLUSTER MYID").decode(), client))
    return found


def owner(url: str, key: str) -> tuple[int, Node]:
    """(slot of ``key``, the master serving it)."""
    found = nodes(url)
    slot = int(found[0].client.execute_command("CLUSTER KEYSLOT", key))
    for first, last, master, *_ in found[0].client.execute_command("CLUSTER SLOTS"):
        if first <= slot <= last:
            return slot, next(node for node in found if node.port == int(master[1]))
    raise LookupError(f"slot {slot} is not served")


def start_migration(slot: int, source: Node, target: Node) -> None:
    target.client.execute_command("CLUSTER SETSLOT", slot, "IMPORTING", source.node_id)
    source.client.execute_command("CLUSTER SETSLOT", slot, "MIGRATING", target.node_id)


def move_keys(slot: int, source: Node, target: Node, keys: list[bytes] | None = None) -> None:
    keys = keys if keys is not None else source.client.execute_command("CLUSTER GETKEYSINSLOT", slot, 1000)
    if keys:
        source.client.execute_command("MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "KEYS", *keys)


def finish_migration(url: str, slot: int, target: Node) -> None:
    """The target first, as Redis's own resharding does: a source that already says MOVED while the
    target is still importing would send a client back and forth until it gives up (TTL exhausted)."""
    for node in sorted(nodes(url), key=lambda node: node.port != target.port):
        node.client.execute_command("CLUSTER SETSLOT", slot, "NODE", target.node_id)


def move_slot(url: str, slot: int, source: Node, target: Node) -> None:
    start_migration(slot, source, target)
    move_keys(slot, source, target)
    finish_migration(url, slot, target)


def shut_down(node: Node) -> None:
    with contextlib.suppress(redis.ConnectionError):
        node.client.execute_command("SHUTDOWN", "NOSAVE")
