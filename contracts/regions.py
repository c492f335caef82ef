"""Where a request comes from: the header that names the caller's region to an upstream.

Probe workers send their own region (TOKENWAY_REGION) and the gateway its own, so the simulated
fleet (sim/network.py) can apply that region's network distance to the provider, and per-region
statistics measure what traffic from that region really sees. Real providers ignore the header.
"""

from __future__ import annotations

REGION_HEADER = "x-tokenway-region"
