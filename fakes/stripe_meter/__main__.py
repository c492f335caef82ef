from __future__ import annotations

import argparse

from aiohttp import web

from fakes.stripe_meter.app import app_create


def main() -> None:
    parser = argparse.ArgumentParser(description="Stripe meter-event emulator")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=12111)
    args = parser.parse_args()
    web.run_app(app_create(), host=args.host, port=args.port, access_log=None, print=None)


if __name__ == "__main__":
    main()
