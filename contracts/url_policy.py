"""Refuse user-supplied URLs that reach inside our network (SSRF guard for BYOK base URLs).

Judged by what an address reaches, not by how it is spelled (docs/gateway.md, "Provider URL policy"):

- the URL itself must be plain: http(s), no user info, no fragment, no percent-encoding, spaces,
  control characters or backslashes, an ASCII host (an IDN in its ``xn--`` form), an IPv4 host only
  as four canonical decimal numbers (``2130706433``, ``0177.0.0.1``, ``0x7f.1``, ``127.1`` are the
  same loopback address to a resolver), special-use names (``localhost``, ``.internal``, ...) only
  as loopback, and in production a port on the allow-list (80, 443 and TOKENWAY_BYOK_ALLOWED_PORTS);
- every address the host resolves to must be public: an IPv6 address that carries an IPv4 address
  (mapped, compatible, SIIT-translated, NAT64 well-known and local-use, 6to4, Teredo) is judged by
  that IPv4 address too, and the IANA special-purpose blocks of both registries are refused.
  Loopback is accepted only when ``allow_loopback`` (TOKENWAY_ALLOW_LOOPBACK_URLS: the simulated
  providers listen there in development).

One policy for both sides: the platform checks a URL when a tenant saves it
(``validate_public_url``), the gateway checks the URL and every address again when it connects
(``checked_parts``, ``name_refusal`` and ``refusal`` through routing.upstream.byok_connect), so a name that later resolves
elsewhere is still refused.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

from contracts.env import env_int_list, env_is_set, is_production

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolve = Callable[[str, int], list[str]]  # host, port -> addresses as text (the save-time seam)

METADATA_ADDRESSES = frozenset({ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")})
STANDARD_PORTS = (80, 443)
ALLOWED_PORTS_ENV = "TOKENWAY_BYOK_ALLOWED_PORTS"

LOOPBACK = "a loopback address"
_V4_LOOPBACK = ipaddress.ip_network("127.0.0.0/8")
_V6_LOOPBACK = ipaddress.ip_address("::1")

# IANA IPv4 Special-Purpose Address Registry (RFC 6890 and its updates), the blocks not globally
# reachable, plus multicast and the reserved class E (255.255.255.255 included).
_SPECIAL_V4 = tuple(
    (ipaddress.IPv4Network(cidr), why)
    for cidr, why in (
        ("0.0.0.0/8", "a 'this network' address"),
        ("10.0.0.0/8", "a private address"),
        ("100.64.0.0/10", "a shared (carrier-grade NAT) address"),
        ("169.254.0.0/16", "a link-local address"),
        ("172.16.0.0/12", "a private address"),
        ("192.0.0.0/24", "an IETF protocol assignment address"),
        ("192.0.2.0/24", "a documentation address"),
        ("192.88.99.0/24", "a 6to4 relay anycast address"),
        ("192.168.0.0/16", "a private address"),
        ("198.18.0.0/15", "a benchmarking address"),
        ("198.51.100.0/24", "a documentation address"),
        ("203.0.113.0/24", "a documentation address"),
        ("224.0.0.0/4", "a multicast address"),
        ("240.0.0.0/4", "a reserved address"),
    )
)
# IANA IPv6 Special-Purpose Address Registry, the blocks not globally reachable, and the non-unicast
# space. Outside 2000::/3 (global unicast) every other address is reserved too.
_SPECIAL_V6 = tuple(
    (ipaddress.IPv6Network(cidr), why)
    for cidr, why in (
        ("::/128", "the unspecified address"),
        ("64:ff9b:1::/48", "a local-use NAT64 address"),
        ("100::/64", "a discard-only address"),
        ("2001::/23", "an IETF protocol assignment address"),
        ("2001:db8::/32", "a documentation address"),
        ("3fff::/20", "a documentation address"),
        ("5f00::/16", "a segment-routing address"),
        ("fc00::/7", "a unique-local (private) address"),
        ("fe80::/10", "a link-local address"),
        ("fec0::/10", "a site-local address"),
        ("ff00::/8", "a multicast address"),
    )
)
_GLOBAL_UNICAST_V6 = ipaddress.IPv6Network("2000::/3")
# IPv6 prefixes whose last 32 bits are an IPv4 address (RFC 4291 compatible, RFC 2765 SIIT,
# RFC 6052 NAT64 well-known /96 and the local-use /48 used as a /96). Mapped, 6to4 and Teredo
# have their own properties on IPv6Address.
_LAST_32_BITS = tuple(
    ipaddress.IPv6Network(cidr) for cidr in ("::/96", "::ffff:0:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48")
)

# RFC 6761 / 8375 / 6762 and ICANN's .internal: names that never reach a public provider.
_LOOPBACK_NAMES = ("localhost",)
_PRIVATE_SUFFIXES = ("local", "internal", "home.arpa", "localdomain", "lan", "intranet", "corp")
_RESERVED_SUFFIXES = ("invalid", "test", "example", "onion", "alt")
_LABEL = re.compile(r"^(?!-)[a-z0-9_-]{1,63}(?<!-)$")
_CANONICAL_V4 = re.compile(r"^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$")
_NUMERIC_LABEL = re.compile(r"^(?:\d+|0x[0-9a-f]*)$")  # WHATWG: a host ending in one is an IPv4 address
_PORT = re.compile(r"^[1-9]\d{0,4}$")
MAX_HOST_CHARS = 253


class UnsafeUrl(ValueError):
    """The URL is malformed or points at an address we refuse to call."""


def allowed_ports_setting() -> tuple[int, ...] | None:
    """Ports a tenant's provider URL may name: in production 80, 443 and TOKENWAY_BYOK_ALLOWED_PORTS;
    elsewhere any port (None; the simulated providers listen on 8100) unless that variable is set."""
    if not is_production() and not env_is_set(ALLOWED_PORTS_ENV):
        return None
    return tuple(sorted({*STANDARD_PORTS, *env_int_list(ALLOWED_PORTS_ENV)}))


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (and reaches through a translator), if any."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]  # the client: the bitwise inverse of the last 32 bits
    if any(address in prefix for prefix in _LAST_32_BITS) and int(address) > 1:  # not :: or ::1 themselves
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def refusal(address: IPAddress, *, allow_loopback: bool) -> str | None:
    """Why we refuse to connect to ``address``, or None when it is a public address."""
    if address in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if isinstance(address, ipaddress.IPv6Address):
        return _v6_refusal(address, allow_loopback=allow_loopback)
    if address in _V4_LOOPBACK:
        return None if allow_loopback else LOOPBACK
    return next((why for network, why in _SPECIAL_V4 if address in network), None)


def _v6_refusal(address: ipaddress.IPv6Address, *, allow_loopback: bool) -> str | None:
    if address.scope_id:
        return "a scoped (interface-bound) address"
    if address == _V6_LOOPBACK:
        return None if allow_loopback else LOOPBACK
    inner = embedded_ipv4(address)
    if inner is not None:
        why = refusal(inner, allow_loopback=allow_loopback)
        if why is not None:
            return f"{why} (carried in an IPv6 address)"
    special = next((why for network, why in _SPECIAL_V6 if address in network), None)
    if special is not None:
        return special
    if inner is None and address not in _GLOBAL_UNICAST_V6:
        return "a reserved address"
    return None


def checked_parts(url: str, *, allowed_ports: Iterable[int] | None = None) -> tuple[str, int]:
    """The URL's host (lower case, no brackets or trailing dot) and port when it is spelled plainly;
    raise UnsafeUrl otherwise. Resolves nothing."""
    _check_characters(url)
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise UnsafeUrl("malformed URL") from exc
    if parts.scheme not in {"http", "https"}:
        raise UnsafeUrl("URL scheme must be http or https")
    if "@" in parts.netloc:
        raise UnsafeUrl("URL must not carry credentials")
    if not parts.hostname:
        raise UnsafeUrl("URL must name a host")
    _check_netloc(parts.netloc)
    if allowed_ports is not None and port not in set(allowed_ports):
        raise UnsafeUrl(f"URL port {port} is not allowed (allowed: {', '.join(map(str, sorted(allowed_ports)))})")
    return _checked_host(parts.hostname, bracketed=parts.netloc.startswith("[")), port


def _check_characters(url: str) -> None:
    if not url.isascii():
        raise UnsafeUrl("URL must be ASCII (an international host name in its xn-- form)")
    if "\\" in url or any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        raise UnsafeUrl("URL must not contain backslashes, spaces or control characters")
    if "#" in url:
        raise UnsafeUrl("URL must not carry a fragment")


def _check_netloc(netloc: str) -> None:
    host_end = netloc.rfind("]") if netloc.startswith("[") else -1
    if "%" in netloc:
        raise UnsafeUrl("URL host must not be percent-encoded")
    if ":" in netloc[host_end + 1 :] and not _PORT.match(netloc.rsplit(":", 1)[1]):
        raise UnsafeUrl("URL port must be a plain number")


def _checked_host(host: str, *, bracketed: bool) -> str:
    if bracketed:
        try:
            return str(ipaddress.IPv6Address(host))
        except ValueError as exc:
            raise UnsafeUrl("URL host in brackets must be an IPv6 address") from exc
    name = host[:-1] if host.endswith(".") else host
    labels = name.split(".")
    if _NUMERIC_LABEL.match(labels[-1]):
        if not _CANONICAL_V4.match(name):
            raise UnsafeUrl("URL host is an IPv4 address in an odd spelling: write it as four decimal numbers")
        return name
    if len(name) > MAX_HOST_CHARS or not all(_LABEL.match(label) for label in labels):
        raise UnsafeUrl("URL host is not a valid host name")
    return name


def name_refusal(host: str, *, allow_loopback: bool) -> str | None:
    """Why a host name is refused before it is looked up (special-use names), or None."""
    if any(host == name or host.endswith(f".{name}") for name in _LOOPBACK_NAMES):
        return None if allow_loopback else LOOPBACK
    if any(host == suffix or host.endswith(f".{suffix}") for suffix in _PRIVATE_SUFFIXES):
        return "a private network name"
    if any(host == suffix or host.endswith(f".{suffix}") for suffix in _RESERVED_SUFFIXES):
        return "a reserved name"
    return None


def system_resolve(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    return [str(info[4][0]) for info in infos]


def addresses(host: str, port: int, resolve: Resolve = system_resolve) -> list[IPAddress]:
    """The host's addresses: itself when it is an IP literal, else what ``resolve`` answers."""
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        answers = resolve(host, port)
    except (OSError, UnicodeError) as exc:
        raise UnsafeUrl(f"cannot resolve host {host!r}") from exc
    try:
        return [ipaddress.ip_address(answer) for answer in answers]
    except ValueError as exc:
        raise UnsafeUrl(f"host {host!r} resolves to something that is not an address") from exc


def validate_public_url(
    url: str,
    *,
    allow_loopback: bool = False,
    allowed_ports: Iterable[int] | None = None,
    resolve: Resolve = system_resolve,
) -> str:
    """Return the URL unchanged when it is safe to call; raise UnsafeUrl otherwise."""
    host, port = checked_parts(url, allowed_ports=allowed_ports)
    reason = name_refusal(host, allow_loopback=allow_loopback)
    if reason:
        raise UnsafeUrl(f"URL host is {reason}")
    found = addresses(host, port, resolve)
    if not found:
        raise UnsafeUrl(f"cannot resolve host {host!r}")
    for address in found:
        reason = refusal(address, allow_loopback=allow_loopback)
        if reason:
            raise UnsafeUrl(f"URL host resolves to {reason}")
    return url
