"""The platform's environment helpers: the typed readers live in contracts.env (shared with the gateway).

Re-exported here for the modules that import them from ``foundation.env``; ``read_stack_env`` is the
platform's own (the file ``make run`` writes).
"""

from __future__ import annotations

from pathlib import Path

from contracts.env import EnvError as EnvError
from contracts.env import env_bool as env_bool
from contracts.env import env_float as env_float
from contracts.env import env_int as env_int
from contracts.env import env_list as env_list
from contracts.env import env_secret as env_secret
from contracts.env import env_str as env_str


def read_stack_env(path: Path) -> dict[str, str]:
    """``NAME=value`` lines of the file ``make run`` writes for its servers; empty when absent.

    Settings use it (outside tests) for ``DATABASE_URL`` / ``REDIS_URL`` left unset, so
    management commands reach the running stack's embedded PostgreSQL and Redis.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return {}
    pairs = (line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))
    return {name.strip(): value.strip() for name, value in pairs}
