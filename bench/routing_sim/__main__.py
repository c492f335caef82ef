"""``python -m bench.routing_sim``: the routing simulation (docs/routing.md, "Routing simulation").

Replays each workload variant (bench/routing_sim/variants.py) under every router against the
simulated fleet in virtual time and prints one table: open-loop goodput, tokens/s delivered, p50/p90
time to first byte, cost, upstream 429s, money lost, and the composite (good answers per dollar); then
(with REDIS_URL set and --http) a smaller replay over real HTTP through the gateway and the fleet to
cross-check the virtual replay's figures for Tokenway balanced.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from bench.routing_sim import report, workload
from bench.routing_sim.run import compare
from bench.routing_sim.variants import VARIANTS

COMMAND = ".venv/bin/python -m bench.routing_sim"
ROUTERS = ("random", "least-latency", "litellm-latency", "tokenway:balanced")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=5_000, help="per variant")
    parser.add_argument("--variants", default="", help="comma-separated names (default: all)")
    parser.add_argument("--http-requests", type=int, default=400)
    parser.add_argument("--http", action="store_true", help="also the real-HTTP cross-check (needs REDIS_URL)")
    args, _ = parser.parse_known_args(argv)
    started = time.monotonic()
    chosen = [v for v in VARIANTS if not args.variants or v.name in args.variants.split(",")]
    lines, verdicts = report.variants_header(), []
    for variant in chosen:
        requests = workload.build(args.requests, seed=variant.seed, duration_s=variant.duration_s, share=variant.share)
        results = compare(requests, ROUTERS, variant=variant)
        lines += report.variant_rows(variant.name, results)
        verdicts.append(report.verdict(variant.name, results))
        print(lines[-1], file=sys.stderr)
    print(f"routing simulation: {args.requests:,} requests per variant, virtual time, no HTTP")
    print("\n".join(lines))
    print()
    print("\n".join(verdicts))
    print(f"reproduce: {COMMAND} --requests {args.requests}   ({time.monotonic() - started:.0f} s)")
    if args.http and os.environ.get("REDIS_URL"):
        from bench.routing_sim import http_check

        print(http_check.run(args.http_requests, seed=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
