"""Standalone gateway: ``python -m routing --port 8001``.

uvicorn (uvloop + httptools) by default: in bench/gateway_bench.py it was ahead of
granian on req/s and streams/s in most runs and uses ~30 MB less; ``--server granian``
stays available (it had the better p99 at concurrency 1 in some runs).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from routing.edge import PROTOCOL  # deadlines, limits and JSON refusals at the socket (TOKENWAY_HTTP_*)

SERVERS = ("granian", "uvicorn")
# Accept queue: a burst of new streams beyond 2,048 (uvicorn's default) was reset by the kernel in
# bench/gateway_scale.py; the kernel caps this at net.core.somaxconn.
BACKLOG = 16_384


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m routing", description="Run the Tokenway gateway alone.")
    parser.add_argument("--host", default=os.environ.get("GATEWAY_HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("GATEWAY_PORT", "8001")))
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--server", choices=SERVERS, default=os.environ.get("GATEWAY_SERVER", "uvicorn"))
    args = parser.parse_args(argv)
    root = str(Path(__file__).resolve().parents[1])
    if root not in sys.path:
        sys.path.insert(0, root)
    if args.server == "granian":
        _granian(args.host, args.port, args.workers)
    else:
        _uvicorn(args.host, args.port, args.workers)


def _granian(host: str, port: int, workers: int) -> None:
    from granian.constants import Interfaces, Loops
    from granian.server import Server

    server = Server(
        "routing.asgi:app", address=host, port=port, interface=Interfaces.ASGI, workers=workers,
        loop=Loops.uvloop, log_access=False, factory=False, backlog=BACKLOG,
    )  # fmt: skip
    server.serve()


def _uvicorn(host: str, port: int, workers: int) -> None:
    import uvicorn

    uvicorn.run(
        "routing.asgi:app", host=host, port=port, workers=workers, loop="uvloop", http=PROTOCOL,
        lifespan="on", access_log=False, log_level="warning", log_config=None,  # routing.asgi sets logging
        backlog=BACKLOG,
    )  # fmt: skip


if __name__ == "__main__":
    main()
