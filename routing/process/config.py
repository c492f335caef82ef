"""Gateway settings, read once from the environment (no Django import)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from contracts.env import (
    DEV_CREDENTIAL_KEYS,
    DEV_PEPPER,
    env_bool,
    env_float,
    env_int,
    env_list,
    env_secret,
    env_str,
    is_production,
)
from contracts.url_policy import allowed_ports_setting


@dataclass(frozen=True)
class GatewayConfig:
    redis_url: str = "redis://127.0.0.1:6379/0"
    redis_cluster: bool | None = (
        None  # TOKENWAY_REDIS_CLUSTER: True/False, None = ask the server (routing.redis.client)
    )
    region: str = "beijing"
    key_pepper: str = DEV_PEPPER
    credential_keys: tuple[str, ...] = DEV_CREDENTIAL_KEYS
    max_body_bytes: int = 10 * 1024 * 1024
    connect_timeout_s: float = 5.0
    upstream_per_host_limit: int = 0  # requests in flight to one upstream host; 0 = bounded by fds/memory only
    pool_wait_s: float = 1.0  # longest wait for a per-host slot before a 503; below the 2 s first-byte floor
    first_token_timeout_s: float = 60.0  # upstream headers + first body bytes
    idle_timeout_s: float = 60.0  # longest gap between two upstream chunks
    deadline_s: float = 600.0  # whole request, a slow drip included
    key_poll_s: float = 0.2  # safety net beside pub/sub: revocation within 1 s
    snapshot_poll_s: float = 0.2
    breaker_failures: int = 3  # consecutive failures that open an offering's breaker
    breaker_cooldown_s: float = 15.0
    generation_ttl_s: int = 3600
    hold_grace_s: float = 60.0  # hold and lease expiry beyond the deadline (metering's reaper)
    max_attempts: int = 3
    spool_dir: str = ".data/spool"  # usage events Redis could not take, until it takes them
    placeholder_provider_key: str = "sk-tokenway-dev-placeholder"
    allow_loopback_provider_urls: bool = False  # tenants' BYOK URLs on loopback: development only
    byok_allowed_ports: tuple[int, ...] | None = None  # ports a tenant's BYOK URL may name; None = any
    metrics_token: str = ""  # /metrics: bearer token; empty = loopback clients only
    learned_limits: bool = True  # route by providers' rate-limit headers and the load forecast (routing.limits)
    hedge_share: float = 0.05  # hedged attempts per tenant ≤ this share of its requests (+1 a minute); 0 = off
    trace_upstream: bool = False  # send the attempt's traceparent to providers (third parties): opt-in
    extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(cls) -> GatewayConfig:
        prod = is_production()
        pepper = env_secret("TOKENWAY_KEY_PEPPER", "" if prod else DEV_PEPPER)
        if prod and not pepper:
            raise RuntimeError("TOKENWAY_KEY_PEPPER must be set in production")
        return cls(
            redis_url=env_str("REDIS_URL", _D.redis_url),
            redis_cluster=env_bool("TOKENWAY_REDIS_CLUSTER") if env_str("TOKENWAY_REDIS_CLUSTER").strip() else None,
            region=env_str("TOKENWAY_REGION", env_list("TOKENWAY_REGIONS", ["beijing"])[0]),
            key_pepper=pepper,
            credential_keys=tuple(env_list("TOKENWAY_CREDENTIAL_KEYS", () if prod else DEV_CREDENTIAL_KEYS)),
            max_body_bytes=env_int("TOKENWAY_MAX_BODY_BYTES", _D.max_body_bytes),
            connect_timeout_s=env_float("TOKENWAY_CONNECT_TIMEOUT", _D.connect_timeout_s),
            upstream_per_host_limit=env_int("TOKENWAY_UPSTREAM_PER_HOST", _D.upstream_per_host_limit),
            pool_wait_s=env_float("TOKENWAY_POOL_WAIT", _D.pool_wait_s),
            first_token_timeout_s=env_float("TOKENWAY_FIRST_TOKEN_TIMEOUT", _D.first_token_timeout_s),
            idle_timeout_s=env_float("TOKENWAY_IDLE_TIMEOUT", _D.idle_timeout_s),
            deadline_s=env_float("TOKENWAY_DEADLINE", _D.deadline_s),
            metrics_token=env_secret("TOKENWAY_METRICS_TOKEN", ""),
            learned_limits=env_bool("TOKENWAY_LEARNED_LIMITS", _D.learned_limits),
            hedge_share=env_float("TOKENWAY_HEDGE_SHARE", _D.hedge_share),
            trace_upstream=env_bool("TOKENWAY_TRACE_UPSTREAM", _D.trace_upstream),
            allow_loopback_provider_urls=env_bool("TOKENWAY_ALLOW_LOOPBACK_URLS", not prod),
            byok_allowed_ports=allowed_ports_setting(),
            spool_dir=env_str("TOKENWAY_SPOOL_DIR") or str(Path(env_str("TOKENWAY_DATA_DIR", ".data")) / "spool"),
        )


_D = GatewayConfig()
