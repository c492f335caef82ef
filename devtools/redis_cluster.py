"""A Redis Cluster of real ``redis-server`` processes on loopback ports, for tests and benchmarks.

``with redis_cluster(masters=3) as url:`` starts the masters in cluster mode, hands each
an equal range of the 16,384 slots, introduces them to each other (CLUSTER MEET) and
waits until every node reports ``cluster_state:ok``. No ``redis-cli`` needed: the slots
are assigned with plain commands, which Redis 6 (the embedded server) and 7 both have.
The URL names one node; clients discover the rest (``redis.RedisCluster.from_url``).
"""

from __future__ import annotations

import shutil
import socket
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import redis

from devtools.devstack import _redis_binary
from devtools.ports import ephemeral_start, free_port, port_is_free
from devtools.processes import spawn, stop

SLOTS = 16_384
READY_TIMEOUT_S = 30.0
# Each node also listens on its port + 10,000 (the cluster bus; Redis 6 cannot move it).
BUS_OFFSET = 10_000


NODE_TRIES = 5  # a port taken between the check and redis-server's bind: another pair is tried
LISTEN_TIMEOUT_S = 15.0


def _node_port() -> int:
    """A free port whose cluster-bus port is free too, both below the ephemeral range (devtools.ports)."""
    below = ephemeral_start() - BUS_OFFSET
    for _ in range(200):
        port = free_port(below=below)
        if port + BUS_OFFSET < 65_536 and port_is_free(port + BUS_OFFSET):
            return port
    raise RuntimeError("no free pair of loopback ports for a Redis Cluster node")


def _answering(port: int) -> bool:
    """Whether a Redis server answers PING on the port (not just anything accepting connections)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _start_node(stack: ExitStack, folder: Path) -> int:
    """One node on a free pair of ports; its port. A node that exits at once (its port was taken
    after all) is replaced by one on another pair."""
    for _ in range(NODE_TRIES):
        port = _node_port()
        node_dir = folder / str(port)
        node_dir.mkdir(exist_ok=True)
        args = [_redis_binary(), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(node_dir),
                "--daemonize", "no", "--loglevel", "warning", "--save", "", "--appendonly", "no",
                "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", "5000"]  # fmt: skip
        process = spawn(args, quiet=True)
        stack.callback(stop, process, timeout=10)
        deadline = time.monotonic() + LISTEN_TIMEOUT_S
        while process.poll() is None and time.monotonic() < deadline:
            if _answering(port):
                return port
            time.sleep(0.05)
        if process.poll() is None:
            raise RuntimeError(f"the Redis Cluster node on port {port} did not listen within {LISTEN_TIMEOUT_S}s")
    raise RuntimeError(f"no Redis Cluster node started in {NODE_TRIES} tries (their ports were taken)")


def _assign_slots(clients: list[redis.Redis]) -> None:
    share = SLOTS // len(clients)
    for index, client in enumerate(clients):
        first = index * share
        last = SLOTS - 1 if index == len(clients) - 1 else first + share - 1
        client.execute_command("CLUSTER ADDSLOTS", *range(first, last + 1))


def _wait_ready(clients: list[redis.Redis], ports: list[int]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        infos = [client.execute_command("CLUSTER INFO") for client in clients]  # a dict (redis-py parses it)
        if all(
            str(info.get("cluster_state")) == "ok" and int(info.get("cluster_known_nodes", 0)) == len(ports)
            for info in infos
        ):
            return
        time.sleep(0.1)
    raise RuntimeError(f"the Redis Cluster on ports {ports} was not ready within {READY_TIMEOUT_S}s")


@contextmanager
def redis_cluster(masters: int = 3) -> Iterator[str]:
    """Start ``masters`` cluster nodes (no replicas); yield ``redis://127.0.0.1:<first port>/0``."""
    folder = Path(tempfile.mkdtemp(prefix="tokenway-redis-cluster-"))
    with ExitStack() as stack:
        stack.callback(shutil.rmtree, folder, ignore_errors=True)
        ports: list[int] = []
        while len(ports) < masters:
            ports.append(_start_node(stack, folder))  # a running node's ports are no longer free
        clients = [redis.Redis(host="127.0.0.1", port=port) for port in ports]
        for client in clients:
            stack.callback(client.close)
        _assign_slots(clients)
        for port in ports[1:]:
            clients[0].execute_command("CLUSTER MEET", "127.0.0.1", port)
        _wait_ready(clients, ports)
        yield f"redis://127.0.0.1:{ports[0]}/0"


if __name__ == "__main__":
    import signal

    with redis_cluster() as cluster_url:
        print(cluster_url, flush=True)
        signal.sigwait({signal.SIGINT, signal.SIGTERM})
