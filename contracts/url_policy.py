"""Refuse user-supplied URLs that point inside our network (SSRF guard for BYOK base URLs).

Private, link-local, loopback, unspecified, multicast, reserved and cloud metadata
addresses are refused; host names are resolved and every address must pass.
Loopback is accepted only when ``allow_loopback`` (TOKENWAY_ALLOW_LOOPBACK_URLS: the
simulated providers listen there in development).

One policy for both sides: the platform checks a URL when a tenant saves it
(``validate_public_url``), the gateway checks every address again when it connects
(``refusal`` through routing.byok_connect), so a name that later resolves elsewhere
is still refused.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

METADATA_ADDRESSES = frozenset({ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")})
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class UnsafeUrl(ValueError):
    """The URL is malformed or points at an address we refuse to call."""


def _addresses(host: str, port: int) -> list[IPAddress]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError) as exc:
        raise UnsafeUrl(f"cannot resolve host {host!r}") from exc
    return [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]


def refusal(address: IPAddress, *, allow_loopback: bool) -> str | None:
    """Why we refuse to connect to ``address``, or None when it is a public address."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if address.is_loopback:
        return None if allow_loopback else "a loopback address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_multicast:
        return "a multicast address"
    if address.is_private or not address.is_global:
        return "a private or reserved address"
    return None


def validate_public_url(url: str, *, allow_loopback: bool = False) -> str:
    """Return the URL unchanged when it is safe to call; raise UnsafeUrl otherwise."""
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise UnsafeUrl("malformed URL") from exc
    if parts.scheme not in {"http", "https"}:
        raise UnsafeUrl("URL scheme must be http or https")
    if not parts.hostname:
        raise UnsafeUrl("URL must name a host")
    if parts.username or parts.password or "@" in parts.netloc:
        raise UnsafeUrl("URL must not carry credentials")
    if parts.fragment or "#" in url:
        raise UnsafeUrl("URL must not carry a fragment")
    if "\\" in url or any(ch.isspace() or ord(ch) < 32 for ch in url):
        raise UnsafeUrl("URL must not contain backslashes, spaces or control characters")
    for address in _addresses(parts.hostname, port):
        reason = refusal(address, allow_loopback=allow_loopback)
        if reason:
            raise UnsafeUrl(f"URL host resolves to {reason}")
    return url
