"""Evaluation's health component (listed by tokenway.health): the simulated provider fleet."""

from __future__ import annotations

import urllib.request

from django.conf import settings

from foundation.health import ComponentStatus


def check_sim() -> ComponentStatus:
    try:
        with urllib.request.urlopen(f"{settings.SIM_BASE_URL}/_sim/health", timeout=1) as response:  # noqa: S310 - loopback URL from settings
            return ComponentStatus(response.status == 200, {"url": settings.SIM_BASE_URL})
    except OSError as exc:
        return ComponentStatus(False, {"error": type(exc).__name__, "url": settings.SIM_BASE_URL})
