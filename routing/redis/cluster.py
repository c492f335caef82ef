"""The gateway's Redis client on a Redis Cluster: one auto-pipelined connection per master.

Each command goes to the master that serves its key's slot (``routing.redis.slots``), through
that master's ``PipelinedRedis``, so the commands of one loop tick still leave in one write per
node. The slot map comes from ``CLUSTER SLOTS`` at connect and again after a redirect or a lost
connection. Redirects: ``MOVED`` (the slot has a new owner) updates that slot, refreshes the map
in the background and retries once on the new owner; ``ASK`` (the slot is being migrated and the
key already left) retries once on the named node after ``ASKING``. A master that is down answers
``RedisUnavailable`` for its slots, as a single Redis does for all of them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from functools import partial
from typing import Any
from urllib.parse import quote

import hiredis

from routing.redis.pipe import Arg, PipelinedRedis, RedisUnavailable
from routing.redis.slots import SLOTS, as_bytes, command_key, command_name, key_slot

log = logging.getLogger("routing.redis")

_MGET = frozenset({"MGET", "mget", b"MGET", b"mget"})  # split by slot (several keys, most often several slots)
REFRESH_AT_MOST_EVERY_S = 0.5  # a burst of redirects or lost connections reloads the map once
# TRYAGAIN: a call of several keys in a slot being migrated while its keys are split between the
# two nodes; migrations move a slot's keys within milliseconds, so wait that out before a 503.
TRYAGAIN_RETRIES = 4
TRYAGAIN_WAIT_S = 0.05
Address = tuple[str, int]


def parse_slots(reply: list[Any], asked: Address) -> list[tuple[int, int, Address]]:
    """CLUSTER SLOTS -> (first slot, last slot, master address); an empty host is the node asked."""
    ranges = []
    for entry in reply:
        first, last, master = int(entry[0]), int(entry[1]), entry[2]
        host = master[0].decode() if isinstance(master[0], bytes) else str(master[0])
        ranges.append((first, last, (host or asked[0], int(master[1]))))
    return ranges


def _redirect(exc: BaseException | None) -> tuple[str, int, Address] | None:
    """``MOVED 3999 127.0.0.1:6381`` / ``ASK ...`` -> (kind, slot, address); None for other outcomes."""
    if not isinstance(exc, hiredis.ReplyError):
        return None
    text = str(exc)
    if not text.startswith(("MOVED ", "ASK ")):
        return None
    kind, slot, where = text.split()
    host, _, port = where.rpartition(":")
    return kind, int(slot), (host, int(port))


class ClusterRedis(PipelinedRedis):
    """``PipelinedRedis`` for a cluster; ``url`` names any one node (the others are discovered).
    A cluster has database 0 only: a database number in ``url`` is not used."""

    def __init__(self, url: str) -> None:
        super().__init__(url)  # the seed node's address and password; its own connection is unused
        self._nodes: dict[Address, PipelinedRedis] = {}
        self._slot_nodes: list[PipelinedRedis | None] = [None] * SLOTS
        self._masters: list[PipelinedRedis] = []
        self._refresh: asyncio.Task[None] | None = None
        self._refreshed_at = 0.0
        self._pubsub_turn = 0

    # --- the slot map -----------------------------------------------------------------
    def _node(self, address: Address) -> PipelinedRedis:
        node = self._nodes.get(address)
        if node is None:
            auth = f":{quote(self._password, safe='')}@" if self._password else ""
            node = self._nodes[address] = PipelinedRedis(f"redis://{auth}{address[0]}:{address[1]}/0")
        return node

    async def refresh_slots(self) -> None:
        """Load the slot map from the first node that answers (the known masters, then the seed)."""
        self._refreshed_at = time.monotonic()
        asked = [*self._masters, self._node((self._host, self._port))]
        for node in asked:
            try:
                reply = await node.execute("CLUSTER", "SLOTS")
            except (RedisUnavailable, hiredis.ReplyError) as exc:
                log.debug("cluster slots not read from %s: %s", node.url, exc)
                continue
            self._apply(parse_slots(reply, (node._host, node._port)))
            return
        raise RedisUnavailable("no node of the redis cluster answered CLUSTER SLOTS")

    def _apply(self, ranges: list[tuple[int, int, Address]]) -> None:
        slot_nodes: list[PipelinedRedis | None] = [None] * SLOTS
        masters: dict[Address, PipelinedRedis] = {}
        for first, last, address in ranges:
            node = masters.setdefault(address, self._node(address))
            slot_nodes[first : last + 1] = [node] * (last - first + 1)
        self._slot_nodes, self._masters = slot_nodes, list(masters.values())

    def _schedule_refresh(self) -> None:
        if self._refresh is not None and not self._refresh.done():
            return
        if time.monotonic() - self._refreshed_at < REFRESH_AT_MOST_EVERY_S:
            return
        self._refresh = asyncio.ensure_future(self._refresh_quietly())

    async def _refresh_quietly(self) -> None:
        try:
            await self.refresh_slots()
        except RedisUnavailable as exc:
            log.warning("redis cluster slot map not refreshed: %s", exc)

    # --- connections ----------------------------------------------------------------------
    async def connect(self) -> None:
        """Read the slot map and open every master; a master that is down is retried on use."""
        await self.refresh_slots()
        results = await asyncio.gather(*(node.ensure_connected() for node in self._masters), return_exceptions=True)
        for node, result in zip(self._masters, results, strict=True):
            if isinstance(result, BaseException):
                log.warning("redis cluster node %s not reachable at connect: %s", node.url, result)

    @property
    def connected(self) -> bool:
        return any(node.connected for node in self._masters)

    def pubsub_url(self) -> str:
        """A master, another one on each call: a subscriber whose node went away moves on.
        Cluster PUBLISH reaches the subscribers of every node."""
        if not self._masters:
            return self.url
        self._pubsub_turn += 1
        return self._masters[self._pubsub_turn % len(self._masters)].url

    async def close(self) -> None:
        if self._refresh is not None:
            self._refresh.cancel()
            await asyncio.gather(self._refresh, return_exceptions=True)
        for node in self._nodes.values():
            await node.close()

    # --- commands ---------------------------------------------------------------------------
    def _route(self, args: tuple[Arg, ...]) -> PipelinedRedis:
        key = command_key(args)
        if key is not None:
            node = self._slot_nodes[key_slot(key)]
            if node is None:
                raise RedisUnavailable(f"no redis cluster node serves slot {key_slot(key)}")
            return node
        for node in self._masters:
            if node.connected:
                return node
        if not self._masters:
            raise RedisUnavailable("redis cluster slot map is empty")
        return self._masters[0]

    async def execute(self, *args: Arg) -> Any:
        name = command_name(args)
        if name == b"SCRIPT" and len(args) > 1 and as_bytes(args[1]).upper() == b"LOAD":
            return await self._on_every_master(args)
        return await self.submit(*args)

    async def _on_every_master(self, args: tuple[Arg, ...]) -> Any:
        """SCRIPT LOAD: every master may be asked to run the script (a NOSCRIPT falls back to EVAL)."""
        replies = await asyncio.gather(*(self._call(node, args) for node in self._masters))
        return replies[0]

    def submit(self, *args: Arg) -> asyncio.Future[Any]:
        if len(args) > 2 and args[0] in _MGET:
            return asyncio.ensure_future(self._mget(args[1:]))
        try:
            node = self._route(args)
        except RedisUnavailable as exc:
            failed: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            failed.set_exception(exc)
            return failed
        if not node.connected:  # reconnect first (fails fast for a while after a refused connect)
            return asyncio.ensure_future(self._call(node, args))
        outer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        node.submit(*args).add_done_callback(partial(self._settle, outer, args))
        return outer

    def _settle(self, outer: asyncio.Future[Any], args: tuple[Arg, ...], inner: asyncio.Future[Any]) -> None:
        exc = None if inner.cancelled() else inner.exception()  # read even when no one waits any more
        if outer.done():
            return
        if inner.cancelled():
            outer.cancel()
        elif exc is None:
            outer.set_result(inner.result())
        elif _redirect(exc) is not None or _is_try_again(exc):
            retry = asyncio.ensure_future(self._retry(args, exc))
            retry.add_done_callback(partial(_copy_outcome, outer))
        else:
            if isinstance(exc, RedisUnavailable):
                self._schedule_refresh()  # a master lost: maybe a replica took its slots over
            outer.set_exception(exc)

    async def _call(self, node: PipelinedRedis, args: tuple[Arg, ...]) -> Any:
        try:
            return await node.execute(*args)
        except RedisUnavailable:
            self._schedule_refresh()
            raise
        except hiredis.ReplyError as exc:
            redirect = _redirect(exc)
            if redirect is None:
                raise
            return await self._follow(redirect, args)

    async def _retry(self, args: tuple[Arg, ...], exc: BaseException) -> Any:
        """After a redirect (followed once) or TRYAGAIN (waited out a few times)."""
        for _ in range(TRYAGAIN_RETRIES):
            try:
                redirect = _redirect(exc)
                if redirect is not None:
                    return await self._follow(redirect, args)
                await asyncio.sleep(TRYAGAIN_WAIT_S)
                return await self._call(self._route(args), args)
            except RedisUnavailable as again:
                if not _is_try_again(again):
                    raise
                exc = again
        raise exc

    async def _follow(self, redirect: tuple[str, int, Address], args: tuple[Arg, ...]) -> Any:
        """Retry once where the cluster said; a second redirect is the caller's error."""
        kind, slot, address = redirect
        node = self._node(address)
        if kind == "MOVED":
            self._slot_nodes[slot] = node
            self._schedule_refresh()
            return await node.execute(*args)
        await node.ensure_connected()
        asking = node.submit("ASKING")  # same write, same connection, right before the command
        reply = node.submit(*args)
        await asking
        return await reply

    async def _mget(self, keys: tuple[Arg, ...]) -> list[Any]:
        """MGET over keys of several slots: one GET per key, in this tick's pipelines, in order."""
        return list(await asyncio.gather(*(self.submit("GET", key) for key in keys)))


def _is_try_again(exc: BaseException | None) -> bool:
    return isinstance(exc, RedisUnavailable) and str(exc).startswith("TRYAGAIN")


def _copy_outcome(outer: asyncio.Future[Any], done: asyncio.Future[Any]) -> None:
    if outer.done():
        return
    if done.cancelled():
        outer.cancel()
    elif (exc := done.exception()) is not None:
        outer.set_exception(exc)
    else:
        outer.set_result(done.result())
