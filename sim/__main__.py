"""``python -m sim --port 8100 [--seed N] [--time-scale F | --zero-latency] [--profiles FILE] [--catalog FILE]``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any

from contracts.env import env_float, env_int, env_str
from sim.server import serve_forever


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m sim", description="Simulated LLM provider fleet on 127.0.0.1")
    parser.add_argument("--port", type=int, default=env_int("SIM_PORT", 8100))
    parser.add_argument("--seed", type=int, default=env_int("SIM_SEED", 0))
    parser.add_argument(
        "--time-scale",
        type=float,
        default=env_float("SIM_TIME_SCALE", 1.0),
        help="real seconds per sim second (0.01 = 100x faster)",
    )
    parser.add_argument("--zero-latency", action="store_true", help="same as --time-scale 0")
    parser.add_argument("--profiles", default=env_str("SIM_PROFILES") or None)
    parser.add_argument("--catalog", default=env_str("SIM_CATALOG") or None)
    return parser


def _run(coro: Coroutine[Any, Any, None]) -> None:
    try:
        import uvloop
    except ImportError:
        asyncio.run(coro)
        return
    uvloop.run(coro)


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    scale = 0.0 if args.zero_latency else args.time_scale
    with contextlib.suppress(KeyboardInterrupt):
        _run(
            serve_forever(
                port=args.port, seed=args.seed, time_scale=scale, profiles=args.profiles, catalog=args.catalog
            )
        )


if __name__ == "__main__":
    main()
