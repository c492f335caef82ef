"""localstripe bound to loopback only (its own entry point listens on every interface).

``python -m fakes.localstripe_server --port 8420 [--from-scratch]``: the offline
Stripe API used by ``make run`` and the tests.
"""

from __future__ import annotations

import argparse

from aiohttp import web
from localstripe.server import app, store


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=8420)
    parser.add_argument("--from-scratch", action="store_true", help="do not load the previous run's objects")
    args = parser.parse_args(argv)
    if not args.from_scratch:
        store.try_load_from_disk()
    web.run_app(app, host="127.0.0.1", port=args.port, access_log=None, print=None)


if __name__ == "__main__":
    main()
