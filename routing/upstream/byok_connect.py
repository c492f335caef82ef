"""Calls to a tenant's own provider URL (BYOK ``base_url``), with the SSRF check repeated at connect time.

The platform refuses an unsafe URL when the tenant saves it, but a host name can resolve
elsewhere later (DNS rebinding). So every connection to a tenant's URL goes through its own
session whose resolver checks each address against contracts.url_policy and hands aiohttp only
the addresses that passed: the connection goes to the very address that was checked (pinned),
the DNS cache is off (every new connection resolves and checks again), redirects are never
followed (routing.upstream.attempt) and proxies from the environment are ignored.
An IP literal never reaches a resolver, so ``checked_url`` refuses a bad one before the call, with
every spelling and port rule of the policy (a URL saved before a rule existed is refused too).
The resolver's ``inner`` is the seam for tests: a name that answers a private address.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import replace

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver

from contracts.snapshot import OfferingSnapshot
from contracts.url_policy import UnsafeUrl, checked_parts, name_refusal, refusal
from routing.http.errors import UpstreamFailure

KEEPALIVE_S = 15.0


class RefusedAddress(OSError):
    """A tenant's provider URL resolved to an address we do not call."""


def refused(host: str, reason: str) -> UpstreamFailure:
    """What the caller reads: which host and why, never the address itself."""
    return UpstreamFailure(
        502, "byok_url_refused",
        f"Your provider base URL's host {host!r} resolves to {reason}; Tokenway does not call it.",
        retryable=True, code="byok_url_refused",
    )  # fmt: skip


class GuardedResolver(AbstractResolver):
    """Resolve with the system resolver, keep only addresses the URL policy accepts."""

    def __init__(self, *, allow_loopback: bool, inner: AbstractResolver | None = None) -> None:
        self._inner = inner or ThreadedResolver()
        self._allow_loopback = allow_loopback

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        results = await self._inner.resolve(host, port, family)
        for result in results:
            reason = refusal(ipaddress.ip_address(result["host"]), allow_loopback=self._allow_loopback)
            if reason:
                # One bad address refuses the name: a name that mixes public and private answers is a trick.
                raise RefusedAddress(reason)
        return results

    async def close(self) -> None:
        await self._inner.close()


def make_byok_session(
    *, connect_timeout_s: float, allow_loopback: bool, dns: AbstractResolver | None = None
) -> aiohttp.ClientSession:
    connector = aiohttp.TCPConnector(
        resolver=GuardedResolver(allow_loopback=allow_loopback, inner=dns),
        use_dns_cache=False,
        limit=0,
        keepalive_timeout=KEEPALIVE_S,
    )
    timeout = aiohttp.ClientTimeout(total=None, connect=connect_timeout_s, sock_connect=connect_timeout_s)
    # No cookies: tenants pointing at the same host share this session, so one tenant's Set-Cookie
    # must never ride on another's call.
    return aiohttp.ClientSession(
        connector=connector, timeout=timeout, trust_env=False, skip_auto_headers=("User-Agent",),
        cookie_jar=aiohttp.DummyCookieJar(),
    )  # fmt: skip


def checked_url(base_url: str, *, allow_loopback: bool, allowed_ports: tuple[int, ...] | None = None) -> str:
    """The tenant's base URL when it is spelled plainly, on an allowed port, and its host is a name
    (its addresses checked by the resolver) or a public IP literal."""
    try:
        host, _ = checked_parts(base_url, allowed_ports=allowed_ports)
    except UnsafeUrl as exc:
        raise UpstreamFailure(
            502, "byok_url_refused", f"Your provider base URL is refused: {exc}; Tokenway does not call it.",
            retryable=True, code="byok_url_refused",
        ) from None  # fmt: skip
    reason = name_refusal(host, allow_loopback=allow_loopback) or _literal_refusal(host, allow_loopback)
    if reason:
        raise refused(host, reason)
    return base_url


def _literal_refusal(host: str, allow_loopback: bool) -> str | None:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None  # a name: the resolver checks what it answers
    return refusal(address, allow_loopback=allow_loopback)


def with_base_url(offering: OfferingSnapshot, base_url: str) -> OfferingSnapshot:
    """The offering as the tenant reaches it: same model and prices, the tenant's endpoint."""
    return replace(offering, base_url=base_url)
