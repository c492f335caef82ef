"""One typed way to read the environment, shared by the platform (tokenway.settings) and the gateway
(routing.process.config), with the development defaults defined once.

``env_secret`` also reads ``NAME_FILE`` so secrets can come from mounted files. A value of the wrong
shape raises ``EnvError`` naming the variable; an empty number means "use the default".
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

# Development defaults: used only outside TOKENWAY_ENV=production, where the real values are required.
DEV_SECRET_KEY = "dev-insecure-secret-key-change-me"  # DJANGO_SECRET_KEY
DEV_PEPPER = "dev-insecure-key-pepper"  # TOKENWAY_KEY_PEPPER: API keys are stored as HMAC-SHA256(pepper, key)
DEV_CREDENTIAL_KEYS = ("ZGV2LWluc2VjdXJlLWZlcm5ldC1rZXktMzJieXRlcyE=",)  # TOKENWAY_CREDENTIAL_KEYS (Fernet)

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


class EnvError(ValueError):
    """An environment variable holds a value of the wrong shape."""


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_is_set(name: str) -> bool:
    """Whether the variable is set at all (even to an empty value)."""
    return name in os.environ


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise EnvError(f"{name} must be a boolean (1/0, true/false), got {raw!r}")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise EnvError(f"{name} must be an integer, got {raw!r}") from exc


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError as exc:
        raise EnvError(f"{name} must be a number, got {raw!r}") from exc


def env_list(name: str, default: Sequence[str] | None = None) -> list[str]:
    """Comma-separated items, blanks dropped; ``default`` when the variable is unset."""
    raw = os.environ.get(name)
    if raw is None:
        return list(default or [])
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_int_list(name: str, default: Sequence[int] | None = None) -> list[int]:
    """Comma-separated integers, blanks dropped; ``default`` when the variable is unset."""
    items = env_list(name, None) if os.environ.get(name) is not None else [str(n) for n in default or []]
    try:
        return [int(item) for item in items]
    except ValueError as exc:
        raise EnvError(f"{name} must be comma-separated integers, got {os.environ.get(name)!r}") from exc


def env_secret(name: str, default: str = "") -> str:
    """Read ``NAME`` or the contents of the file named by ``NAME_FILE``."""
    file_name = os.environ.get(f"{name}_FILE")
    if file_name:
        return Path(file_name).read_text(encoding="utf-8").strip()
    return os.environ.get(name, default)


def is_production() -> bool:
    return env_str("TOKENWAY_ENV", "development") == "production"
