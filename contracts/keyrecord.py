"""What the gateway knows about an API key: written by the platform, read on every request."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import orjson

KEY_RECORD_VERSION = 1
ROUTE_MODES = ("balanced", "cost", "performance", "quality")


@dataclass(frozen=True, slots=True)
class Limits:
    rpm: int | None = None  # requests per minute
    tpm: int | None = None  # tokens per minute (input estimate + max output, corrected after)
    max_concurrency: int | None = None


@dataclass(frozen=True, slots=True)
class RoutingPrefs:
    default_mode: str = "balanced"
    allowed_providers: tuple[str, ...] = ()  # empty = all
    blocked_providers: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class KeyRecord:
    key_id: int
    tenant_id: int
    tenant_slug: str
    name: str
    prefix: str
    live: bool = True
    # Scopes: None = any model / any mode.
    allowed_models: tuple[str, ...] | None = None
    allowed_route_modes: tuple[str, ...] | None = None
    usage_read: bool = True
    key_limits: Limits = field(default_factory=Limits)
    tenant_limits: Limits = field(default_factory=Limits)
    monthly_budget_micros: int | None = None
    key_route_mode: str | None = None
    tenant_routing: RoutingPrefs = field(default_factory=RoutingPrefs)
    expires_at: float | None = None  # epoch seconds; rotation sets it on the old key
    # BYOK: provider slug -> Fernet token of the tenant's provider API key (decrypted by the gateway).
    byok: dict[str, str] = field(default_factory=dict)
    # BYOK: provider slug -> the tenant's own endpoint for that provider (checked again at connect time).
    byok_base_urls: dict[str, str] = field(default_factory=dict)
    # Markup applied by metering; carried so the gateway can hold the tenant price.
    markup_bps: int = 0  # basis points on top of provider cost
    postpaid: bool = False
    # The tenant's monthly spend limit (every key together), checked in admission with open holds counted.
    # Added in place (same version): a record written before it reads as "no limit".
    tenant_monthly_spend_limit_micros: int | None = None
    # An unknown version of a known model family (claude-opus-99-99) is served by the family's newest
    # model instead of a 404 (contracts.model_names); the key's setting, else the tenant's. Off by default.
    model_family_fallback: bool = False
    version: int = KEY_RECORD_VERSION

    def to_json(self) -> bytes:
        return orjson.dumps(asdict(self))

    @classmethod
    def from_json(cls, raw: bytes | str) -> KeyRecord:
        data: dict[str, Any] = orjson.loads(raw)
        if data.get("version") != KEY_RECORD_VERSION:
            raise ValueError(f"unsupported key record version {data.get('version')!r}")
        # A field a newer platform added is ignored, so records can gain fields without a version bump.
        data = {name: value for name, value in data.items() if name in _FIELDS}
        data["key_limits"] = Limits(**data["key_limits"])
        data["tenant_limits"] = Limits(**data["tenant_limits"])
        routing = data["tenant_routing"]
        data["tenant_routing"] = RoutingPrefs(
            default_mode=routing["default_mode"],
            allowed_providers=tuple(routing["allowed_providers"]),
            blocked_providers=tuple(routing["blocked_providers"]),
        )
        for name in ("allowed_models", "allowed_route_modes"):
            if data[name] is not None:
                data[name] = tuple(data[name])
        return cls(**data)


_FIELDS = frozenset(KeyRecord.__dataclass_fields__)
