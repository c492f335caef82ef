"""Who may read ``/metrics`` (the gateway's and the platform's): one rule for both.

With ``TOKENWAY_METRICS_TOKEN`` set, only ``Authorization: Bearer <token>`` (from anywhere);
without it, only clients on a loopback address (a scraper on the same host, or a sidecar).
"""

from __future__ import annotations

import hmac
import ipaddress

METRICS_PATH = "/metrics"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def metrics_allowed(*, client_host: str | None, authorization: str, token: str) -> bool:
    if token:
        scheme, _, presented = authorization.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(presented.strip().encode(), token.encode())
    try:
        return client_host is not None and ipaddress.ip_address(client_host).is_loopback
    except ValueError:
        return False
