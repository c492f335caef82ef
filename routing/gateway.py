"""The gateway's long-lived parts, started and stopped by the ASGI lifespan."""

from __future__ import annotations

import asyncio
import time

import aiohttp

from contracts.usage import UsageEvent
from routing.failover.health import HealthBoard
from routing.failover.shared import LiveSync
from routing.forwarding.credentials import Credentials
from routing.forwarding.forwarder import Forwarder
from routing.handoff.replay import replay_loop
from routing.handoff.spool import UsageSpool, spool_folder
from routing.hedging.policy import Hedging
from routing.limits.board import LimitBoard
from routing.limits.scripts import ADMISSION, SETTLE
from routing.limits.shared import LimitSync
from routing.process.capacity import FdCeiling, current_fd_limit, raise_fd_limit
from routing.process.config import GatewayConfig
from routing.redis.client import redis_client
from routing.router.affinity import AffinityStore
from routing.router.strategy import DefaultScorer, Strategy
from routing.state.keys import KeyCache
from routing.state.offerings import CatalogState
from routing.state.refresher import Refresher
from routing.upstream.http_client import PoolStats, make_session, pool_stats


class Gateway:
    def __init__(self, config: GatewayConfig, strategy: Strategy | None = None) -> None:
        self.config = config
        self.strategy: Strategy = strategy or DefaultScorer()
        self.redis = redis_client(config.redis_url, config.redis_cluster)
        self.keys = KeyCache(self.redis, config.key_pepper)
        self.catalog = CatalogState(config.region)
        # Epoch clock: the live EWMAs are stamped with it and shared with other processes (failover.shared).
        self.health = HealthBoard(
            failures_to_open=config.breaker_failures, cooldown_s=config.breaker_cooldown_s, clock=time.time
        )
        self.live_sync = LiveSync(self.redis, self.health)
        # Learned rate limits and load forecast per offering (limits.shared); off: neither tracked nor used.
        self.limits = LimitBoard(enabled=config.learned_limits)
        self.limit_sync = LimitSync(self.redis, self.limits)
        self.affinity = AffinityStore(self.redis)
        self.credentials = Credentials(config.credential_keys, config.placeholder_provider_key)
        self.refresher = Refresher(self.redis, self.keys, self.catalog, config.key_poll_s)
        self.spool = UsageSpool(spool_folder(config.spool_dir, config.redis_url))
        self.hedging = Hedging(
            self.redis, config.region, config.generation_ttl_s, self._spool_event, share=config.hedge_share
        )
        self._session: aiohttp.ClientSession | None = None
        self._forwarder: Forwarder | None = None
        self._replayer: asyncio.Task[None] | None = None
        self.fd_ceiling: FdCeiling = current_fd_limit()

    @property
    def forwarder(self) -> Forwarder:
        assert self._forwarder is not None, "gateway not started (ASGI lifespan)"
        return self._forwarder

    def _spool_event(self, event: UsageEvent) -> None:
        self.spool.redis_failing = True  # the hedge loser's event found Redis failing (routing.handlers.accounting)
        self.spool.append(event.to_json())

    def pool_stats(self) -> PoolStats:
        return pool_stats(self._session)

    async def start(self) -> None:
        self.fd_ceiling = raise_fd_limit()  # two descriptors per open stream: this is the real ceiling
        await self.redis.connect()
        for script in (ADMISSION, SETTLE):  # on every master of a cluster
            await self.redis.execute("SCRIPT", "LOAD", script.source)
        self._session = make_session(self.config)
        self._forwarder = Forwarder(
            self.config, self._session, self.health, self.credentials, self.catalog.stats_for,
            limits=self.limits if self.config.learned_limits else None, hedging=self.hedging,
        )  # fmt: skip
        await self.refresher.start()
        self._replayer = asyncio.create_task(replay_loop(self.redis, self.spool))
        self.live_sync.start()
        self.limit_sync.start()

    async def stop(self) -> None:
        await self.live_sync.stop()
        await self.limit_sync.stop()
        if self._replayer is not None:
            self._replayer.cancel()
            await asyncio.gather(self._replayer, return_exceptions=True)
        self.spool.rotate()  # what is still spooled is fsync'd; the next process replays it
        await self.refresher.stop()
        if self._forwarder is not None:
            await self._forwarder.close()
        if self._session is not None:
            await self._session.close()
        await self.redis.close()
