"""Validation of a catalog file (docs/catalog-format.md) into plain dicts, with every error's line.

Errors read ``demo.yaml:42: offerings[3].prices.input must be a non-negative integer``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from contracts.catalog_file.yamlnodes import Located
from contracts.provider_usage import USAGE_DIALECTS

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
MODEL_SLUG_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]*$")
DIALECTS = ("openai", "anthropic")
CACHE_POLICIES = ("normalized", "raw_prefix", "none")
PARAMETERS = ("tools", "json_mode", "reasoning", "vision", "tool_choice", "embeddings", "dimensions")
STATUSES = ("active", "degraded", "disabled")
MISSING = object()


@dataclass
class Errors:
    filename: str
    messages: list[str] = field(default_factory=list)

    def add(self, line: int, path: str, message: str) -> None:
        self.messages.append(f"{self.filename}:{line}: {path} {message}")


Check = Callable[[Any], str | None]  # returns a complaint or None


def _str(v: Any) -> str | None:
    return None if isinstance(v, str) and v.strip() else "must be a non-empty string"


def _opt_str(v: Any) -> str | None:
    return None if isinstance(v, str) else "must be a string"


def _bool(v: Any) -> str | None:
    return None if isinstance(v, bool) else "must be true or false"


def _nonneg_int(v: Any) -> str | None:
    return None if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else "must be a non-negative integer"


def _pos_int(v: Any) -> str | None:
    return None if isinstance(v, int) and not isinstance(v, bool) and v > 0 else "must be a positive integer"


def _opt(check: Check) -> Check:
    return lambda v: None if v is None else check(v)


def _one_of(options: tuple[str, ...]) -> Check:
    return lambda v: None if v in options else f"must be one of {', '.join(options)}"


def _matches(pattern: re.Pattern[str], what: str) -> Check:
    return lambda v: None if isinstance(v, str) and pattern.match(v) else f"must be {what}"


def _unit_float(v: Any) -> str | None:
    ok = isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= 1
    return None if ok else "must be a number between 0 and 1"


PROVIDER_FIELDS: dict[str, tuple[Check, Any]] = {
    "slug": (_matches(SLUG_RE, "a slug of [a-z0-9-]"), MISSING),
    "name": (_str, MISSING),
    "website": (_opt_str, ""),
    "base_url": (_str, MISSING),
    "dialect": (_one_of(DIALECTS), MISSING),
    "usage_dialect": (_one_of(USAGE_DIALECTS), "openai"),
    "cached_tokens_in_input": (_bool, True),
    "cache_policy": (_one_of(CACHE_POLICIES), "normalized"),
    "cache_ttl_s": (_nonneg_int, 300),
    "keeps_billing_block": (_bool, False),
    "api_key_env": (_opt_str, ""),
    "region": (_opt_str, ""),
}
MODEL_FIELDS: dict[str, tuple[Check, Any]] = {
    "slug": (_matches(MODEL_SLUG_RE, "a model slug of [A-Za-z0-9._:/-]"), MISSING),
    "name": (_str, MISSING),
    "author": (_opt_str, ""),
    "context_window": (_pos_int, MISSING),
    "max_output": (_pos_int, MISSING),
    "max_reasoning_tokens": (_nonneg_int, 0),  # reasoning beyond the caller's max_tokens (contracts.holds)
    "quality": (_unit_float, 0.5),
    "aliases": (lambda v: None if isinstance(v, list) else "must be a list", ()),  # items: parse.py
}
OFFERING_FIELDS: dict[str, tuple[Check, Any]] = {
    "model": (_str, MISSING),
    "provider": (_str, MISSING),
    "upstream_model": (_str, None),
    "base_url": (_opt(_str), None),
    "dialect": (_opt(_one_of(DIALECTS)), None),
    "usage_dialect": (_opt(_one_of(USAGE_DIALECTS)), None),
    "cached_tokens_in_input": (_opt(_bool), None),
    "cache_policy": (_opt(_one_of(CACHE_POLICIES)), None),
    "cache_ttl_s": (_opt(_nonneg_int), None),
    "keeps_billing_block": (_opt(_bool), None),
    "context_window": (_opt(_pos_int), None),
    "max_output": (_opt(_pos_int), None),
    "max_reasoning_tokens": (_opt(_nonneg_int), None),
    "prices": (lambda v: None, MISSING),  # checked by PRICE_FIELDS
    "parameters": (lambda v: None, ()),  # checked item by item
    "rpm": (_opt(_pos_int), None),
    "tpm": (_opt(_pos_int), None),
    "status": (_one_of(STATUSES), "active"),
}
PRICE_FIELDS: dict[str, tuple[Check, Any]] = {
    "input": (_nonneg_int, MISSING),
    "output": (_nonneg_int, MISSING),
    "cache_read": (_nonneg_int, 0),
    "cache_write_5m": (_nonneg_int, 0),
    "cache_write_1h": (_nonneg_int, 0),
    "reasoning": (_opt(_nonneg_int), None),
}


def check_mapping(
    node: Located, fields: dict[str, tuple[Check, Any]], path: str, errors: Errors
) -> dict[str, Any] | None:
    """Plain dict of the declared fields (defaults filled) or None when the node is unusable."""
    if not isinstance(node.value, dict):
        errors.add(node.line, path, "must be a mapping")
        return None
    out: dict[str, Any] = {}
    for key, child in node.value.items():
        if key not in fields:
            errors.add(child.line, f"{path}.{key}", "is not a known field")
    for name, (check, default) in fields.items():
        child = node.value.get(name)
        if child is None:
            if default is MISSING:
                errors.add(node.line, f"{path}.{name}", "is required")
            out[name] = None if default is MISSING else default
            continue
        complaint = check(child.value)
        if complaint:
            errors.add(child.line, f"{path}.{name}", complaint)
        out[name] = child.value if not isinstance(child.value, dict | list) else child
    return out
