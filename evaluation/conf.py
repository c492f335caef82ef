"""Evaluation settings: Django settings win, then the environment, then these defaults."""

from __future__ import annotations

from django.conf import settings

from contracts.env import env_float, env_int

# Performance probes of every offering from every region at least this often (issue: <= 5 min).
DEFAULT_PERFORMANCE_INTERVAL_S = 300
# Cache, price, capability and quality probes cost more tokens; hourly is enough to catch drift.
DEFAULT_HOURLY_INTERVAL_S = 3600
# Each due probe is shifted by up to this share of its interval so probe times never line up.
DEFAULT_JITTER_SHARE = 0.2


def _setting_int(name: str, default: int) -> int:
    value = getattr(settings, name, None)
    return int(value) if value is not None else env_int(name, default)


def performance_interval_s() -> int:
    return _setting_int("TOKENWAY_EVAL_PERFORMANCE_INTERVAL_S", DEFAULT_PERFORMANCE_INTERVAL_S)


def hourly_interval_s() -> int:
    return _setting_int("TOKENWAY_EVAL_HOURLY_INTERVAL_S", DEFAULT_HOURLY_INTERVAL_S)


def jitter_share() -> float:
    value = getattr(settings, "TOKENWAY_EVAL_JITTER_SHARE", None)
    return float(value) if value is not None else env_float("TOKENWAY_EVAL_JITTER_SHARE", DEFAULT_JITTER_SHARE)


def probe_timeout_s() -> float:
    """Whole-request timeout of one probe request (a 10k-input stream of 256 tokens fits easily)."""
    value = getattr(settings, "TOKENWAY_EVAL_PROBE_TIMEOUT_S", None)
    return float(value) if value is not None else env_float("TOKENWAY_EVAL_PROBE_TIMEOUT_S", 60.0)


def regions() -> list[str]:
    return list(settings.TOKENWAY_REGIONS)


def this_region() -> str:
    return str(settings.TOKENWAY_REGION)


def long_window_refresh_s() -> int:
    """Seconds between recomputations of the 24h and 7d windows. 0 (default): every statistics refresh,
    so all windows end at the same minute and nest exactly. At large catalogs (bench/probing_cost.py:
    1,000 offerings x 4 regions) a few minutes bounds the aggregation's CPU; in between, those windows
    keep their previous end (reported as their ``window_end``)."""
    return _setting_int("TOKENWAY_EVAL_LONG_WINDOW_REFRESH_S", 0)
