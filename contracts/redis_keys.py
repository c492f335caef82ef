"""Names of the Redis keys, streams and channels shared between processes.

Keys that belong to one tenant carry the tenant id in a hash tag ``{t<id>}`` so a
Redis Cluster keeps them in one slot (admission scripts touch several at once).
"""

from __future__ import annotations

from collections.abc import Mapping

from contracts.env import env_str

PREFIX = "tw:"


# --- API keys (written by the platform, read by the gateway) -------------------
# JSON KeyRecord (contracts.keyrecord) under the HMAC of the key.
def key_record(key_hash: str) -> str:
    return f"{PREFIX}key:{key_hash}"


# Bumped on every key change (issue, revoke, rotate, limit edits, tenant settings);
# gateways poll it as a safety net beside the pub/sub channel.
KEYS_VERSION = f"{PREFIX}keys:version"
# Pub/sub: message is the key hash whose record changed ("*" = drop every cached key).
KEYS_CHANNEL = f"{PREFIX}keys:changed"

# --- Catalog and statistics snapshots (contracts.snapshot) --------------------
CATALOG_SNAPSHOT = f"{PREFIX}snapshot:catalog"  # JSON CatalogSnapshot
CATALOG_VERSION = f"{PREFIX}snapshot:catalog:version"
STATS_SNAPSHOT = f"{PREFIX}snapshot:stats"  # JSON StatsSnapshot
STATS_VERSION = f"{PREFIX}snapshot:stats:version"
SNAPSHOT_CHANNEL = f"{PREFIX}snapshot:changed"  # message: "catalog" or "stats"

# --- On-demand re-probes (gateway and incidents -> evaluation) ------------------------
# SET of offering ids to probe again now: the gateway adds one when its breaker opens, evaluation when an
# incident opens or closes; evaluation's re-probe task pops them (evaluation.services.reprobe).
REPROBE_REQUESTS = f"{PREFIX}eval:reprobe"

# --- Restart detection ------------------------------------------------------------
# Set by the platform once keys, catalog, stats and balances are published (a random id).
# Gone while the gateway saw it before: Redis restarted without its data. Gateways keep
# their cached keys and snapshots and answer 503 for what they cannot know, until the
# platform's republish (tokenway.state_rebuild) sets it again.
STATE_MARKER = f"{PREFIX}state:published"

# --- Usage hand-off (gateway -> metering) -------------------------------------
# The hand-off is N streams (shards), a tenant's events always on the same one
# (``usage_shard``), each with its own consumer group ``USAGE_GROUP``. Shard 0 keeps
# the historical name, so a deployment with one shard (the default) is unchanged.
USAGE_STREAM = f"{PREFIX}usage"  # XADD fields: {"e": <UsageEvent JSON>}
USAGE_GROUP = "metering"
# Gateways and metering must agree on it; raising it is safe (consumers read every
# shard below it), lowering it strands what is still on the dropped shards.
USAGE_SHARDS_ENV = "TOKENWAY_USAGE_SHARDS"
MAX_USAGE_SHARDS = 256


def usage_shard_count(environ: Mapping[str, str]) -> int:
    """How many usage streams this deployment has (``TOKENWAY_USAGE_SHARDS``, default 1)."""
    raw = environ.get(USAGE_SHARDS_ENV, "").strip() or "1"
    count = int(raw)
    if not 1 <= count <= MAX_USAGE_SHARDS:
        raise ValueError(f"{USAGE_SHARDS_ENV} must be between 1 and {MAX_USAGE_SHARDS}, not {raw}")
    return count


def usage_shard_count_from_env() -> int:
    """This deployment's usage stream count, from the environment."""
    return usage_shard_count({USAGE_SHARDS_ENV: env_str(USAGE_SHARDS_ENV)})


def usage_shard(tenant_id: int, shards: int) -> int:
    return tenant_id % shards


def usage_stream(shard: int) -> str:
    """Stream of one shard; each name hashes to its own slot, so shards spread over a cluster."""
    return USAGE_STREAM if shard == 0 else f"{PREFIX}usage:{shard}"


def usage_streams(shards: int) -> list[str]:
    return [usage_stream(shard) for shard in range(shards)]


def generation(request_id: str) -> str:
    """Short-lived copy of the usage event so /api/v1/generation answers before ingestion."""
    return f"{PREFIX}gen:{request_id}"


# --- Admission and balance (per tenant, hash-tagged) ---------------------------
def tenant_tag(tenant_id: int) -> str:
    return f"{{t{tenant_id}}}"


def tenant_available(tenant_id: int) -> str:
    """Integer micro-units the tenant may still hold: prepaid balance (+ credit limit) - open holds."""
    return f"{PREFIX}{tenant_tag(tenant_id)}:avail"


def tenant_holds(tenant_id: int) -> str:
    """Hash hold_id -> held micro-units, for the reaper and reconciliation."""
    return f"{PREFIX}{tenant_tag(tenant_id)}:holds"


def key_month_spend(tenant_id: int, key_id: int, yyyymm: str) -> str:
    return f"{PREFIX}{tenant_tag(tenant_id)}:kspend:{key_id}:{yyyymm}"


# A month's spend counter outlives the month by a few days for reconciliation.
MONTH_SPEND_TTL_S = 40 * 86400


def tenant_month_spend(tenant_id: int, yyyymm: str) -> str:
    """Charges the gateway settled for the tenant this month (UTC), every key together: its monthly
    spend limit is checked against it. Seeded from the ledger when missing (metering.spend_counters)."""
    return f"{PREFIX}{tenant_tag(tenant_id)}:tspend:{yyyymm}"


def tenant_held(tenant_id: int) -> str:
    """Hash of the micro-units open holds take from the monthly limits: field ``tenant`` (every key) and
    ``k:<key_id>`` (one key). Admission adds a hold; settlement or the hold reaper, whichever removes the
    hold, takes it off again (see ``tenant_hold_keys``)."""
    return f"{PREFIX}{tenant_tag(tenant_id)}:held"


HELD_KEY_PREFIX = "k:"


def held_key_field(key_id: int) -> str:
    return f"{HELD_KEY_PREFIX}{key_id}"


HELD_TENANT_FIELD = "tenant"


def tenant_hold_keys(tenant_id: int) -> str:
    """Hash hold_id -> key_id of the holds counted in ``tenant_held``. A hold is taken off the counters
    only by whoever removes its entry here, so it is taken off once; a hold without an entry (placed
    before the counters existed) was never counted and is not taken off."""
    return f"{PREFIX}{tenant_tag(tenant_id)}:holds:key"


def rate_window(tenant_id: int, scope: str, minute: int) -> str:
    """Requests/tokens counted in one minute window; scope is 'tenant' or 'key:<id>'."""
    return f"{PREFIX}{tenant_tag(tenant_id)}:rl:{scope}:{minute}"


def hedge_window(tenant_id: int, minute: int) -> str:
    """Hedged attempts the gateway started for a tenant in one minute window (its hedge budget)."""
    return f"{PREFIX}{tenant_tag(tenant_id)}:hedge:{minute}"


def concurrency(tenant_id: int, scope: str) -> str:
    """Sorted set lease_id -> expiry (epoch seconds); scope is 'tenant' or 'key:<id>'."""
    return f"{PREFIX}{tenant_tag(tenant_id)}:conc:{scope}"


def tenant_hold_expiries(tenant_id: int) -> str:
    """Sorted set "<tenant_id>:<hold_id>" -> expiry of the tenant's open holds, scanned by the
    hold reaper; per tenant so the admission and settlement scripts touch one cluster slot."""
    return f"{PREFIX}{tenant_tag(tenant_id)}:holds:expiry"


# The single sorted set of every tenant's hold expiries used before they moved per tenant
# (``tenant_hold_expiries``). Nothing writes it any more; the reaper drains what is left.
HOLD_EXPIRIES = f"{PREFIX}holds:expiry"


# --- Live updates --------------------------------------------------------------
def tenant_group(tenant_id: int) -> str:
    """Channels group name for a tenant's console (balance, usage)."""
    return f"tenant-{tenant_id}"


LEADERBOARD_GROUP = "leaderboard"
# Set (with a TTL) whenever a leaderboard page is served to a visitor: while it lives, each statistics publish
# pre-renders the default views; a board nobody looks at is not rendered every 30 s.
BOARD_VISITED = f"{PREFIX}board:visited"
