"""ASGI entry for the standalone gateway (``python -m routing``): the gateway app alone.

Logging is set here, in every worker process: ``TOKENWAY_LOG_FORMAT`` (text or json) and ``LOG_LEVEL``.
"""

from __future__ import annotations

from contracts import jsonlog
from contracts.env import env_str
from routing.app import make_gateway_app

jsonlog.configure(env_str("TOKENWAY_LOG_FORMAT", "text"), env_str("LOG_LEVEL", "INFO"))
app = make_gateway_app()
