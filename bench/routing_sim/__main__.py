"""``python -m bench.routing_sim``: the routing simulation (docs/routing.md, "Routing simulation").

Replays the same request mix under each router against the simulated fleet in virtual time, at
two loads, prints one table per load and the comparison with the seed article's claims; then (with
REDIS_URL set, unless --no-http) a smaller replay over real HTTP through the gateway and the fleet
to cross-check the virtual replay's figures for Tokenway balanced.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from bench.routing_sim import report, workload
from bench.routing_sim.run import ROUTERS, compare

COMMAND = ".venv/bin/python -m bench.routing_sim"
LOADS = {"normal": 600.0, "overload": 200.0}  # seconds the requests arrive over


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--loads", default=",".join(LOADS), help="normal,overload")
    parser.add_argument("--http-requests", type=int, default=400)
    parser.add_argument("--no-http", action="store_true")
    args, _ = parser.parse_known_args(argv)
    started = time.monotonic()
    for load in args.loads.split(","):
        duration = LOADS[load]
        requests = workload.build(args.requests, seed=args.seed, duration_s=duration)
        results = compare(requests, ROUTERS, seed=args.seed)
        print(report.table(results, requests, load=load, duration_s=duration, command=_command(args)))
    if not args.no_http and os.environ.get("REDIS_URL"):
        from bench.routing_sim import http_check

        print(http_check.run(args.http_requests, seed=args.seed))
    print(f"(routing simulation: {time.monotonic() - started:.0f} s)")
    return 0


def _command(args: argparse.Namespace) -> str:
    return f"{COMMAND} --requests {args.requests} --seed {args.seed}"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
