"""ASGI entry for the standalone gateway (``python -m routing``): the gateway app alone."""

from __future__ import annotations

from routing.app import make_gateway_app

app = make_gateway_app()
