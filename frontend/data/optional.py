"""Look up a function of another domain that may not exist yet (domains land independently)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def optional_function(module: str, name: str) -> Callable[..., Any] | None:
    try:
        loaded = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and module.startswith(exc.name):
            return None
        raise
    found = getattr(loaded, name, None)
    return found if callable(found) else None


def optional_model(module: str, name: str) -> Any:
    """A Django model class of another app, or None while that app has not defined it."""
    try:
        loaded = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and module.startswith(exc.name):
            return None
        raise
    return getattr(loaded, name, None)
