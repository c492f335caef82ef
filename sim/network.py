"""Network distance: each caller region's round trip, jitter and packet loss to each provider's site.

The matrix lives in ``sim/network.yaml`` (documented in docs/sim.md). A request names its caller's
region in the ``x-tokenway-region`` header (contracts.regions): probe workers send their own region,
the gateway its own, so per-region statistics measure what that region's traffic really sees. One
round trip is added to the first byte (request out, first byte back; later chunks are only shifted);
a lost packet adds a TCP retransmission, ``max(min_rto_ms, 2 x RTT)``. A request without the header,
or from a region or to a provider the matrix does not know, travels no distance (tests, benchmarks).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from sim.draws import Draws, mix64, stable_hash

DEFAULT_NETWORK = Path(__file__).resolve().parent / "network.yaml"


@dataclass(frozen=True, slots=True)
class Link:
    rtt_ms: float
    jitter_ms: float  # standard deviation of one request's round trip
    loss: float  # share of requests that lose a packet on the way


@dataclass(frozen=True, slots=True)
class Hop:
    """What the network did to one request (sim milliseconds), logged as ground truth."""

    region: str
    site: str
    rtt_ms: float  # the link's configured round trip
    delay_ms: float  # added before the first byte: this request's round trip (+ retransmission)
    lost: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "region": self.region,
            "site": self.site,
            "rtt_ms": self.rtt_ms,
            "delay_ms": round(self.delay_ms, 3),
            "lost": self.lost,
        }


@dataclass(frozen=True, slots=True)
class Network:
    sites: dict[str, str]  # provider slug -> site
    matrix: dict[str, dict[str, Link]]  # caller region -> site -> link
    min_rto_ms: float = 200.0

    def link(self, region: str, provider: str) -> tuple[str, Link] | None:
        site = self.sites.get(provider)
        link = self.matrix.get(region, {}).get(site) if site else None
        return (site, link) if site and link else None

    def hop(self, region: str | None, provider: str, draws: Draws) -> Hop | None:
        """This request's trip; None when the caller's region or the provider's site is unknown.
        Draws come from their own stream (seeded by ``draws`` and the region), so the provider's
        own draws (content, TTFT) are the same from every region."""
        found = self.link(region, provider) if region else None
        if found is None or region is None:
            return None
        site, link = found
        own = Draws(mix64(draws.u64() ^ stable_hash(region)))
        delay = max(0.0, link.rtt_ms + link.jitter_ms * own.normal())
        lost = own.chance(link.loss)
        if lost:
            delay += max(self.min_rto_ms, 2.0 * link.rtt_ms)
        return Hop(region, site, link.rtt_ms, delay, lost)

    def as_dict(self) -> dict[str, Any]:
        return {
            "sites": dict(self.sites),
            "matrix": {
                region: {site: [x.rtt_ms, x.jitter_ms, x.loss] for site, x in links.items()}
                for region, links in self.matrix.items()
            },
            "min_rto_ms": self.min_rto_ms,
        }


def network_from_dict(raw: dict[str, Any]) -> Network:
    matrix = {
        str(region): {str(site): Link(float(v[0]), float(v[1]), float(v[2])) for site, v in (links or {}).items()}
        for region, links in (raw.get("matrix") or {}).items()
    }
    for links in matrix.values():
        for link in links.values():
            if link.rtt_ms < 0 or link.jitter_ms < 0 or not 0.0 <= link.loss <= 1.0:
                raise ValueError(f"bad network link {link}")
    sites = {str(k): str(v) for k, v in (raw.get("sites") or {}).items()}
    return Network(sites=sites, matrix=matrix, min_rto_ms=float(raw.get("min_rto_ms", 200.0)))


def load_network(path: Path | str = DEFAULT_NETWORK) -> Network:
    return network_from_dict(yaml.safe_load(Path(path).read_text()) or {})
