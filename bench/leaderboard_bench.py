"""Leaderboard page cost against a running stack: time to first byte and bytes on the wire, cold and warm.

    make run PORT=8000 &                                   # the stack as deployed, with a few minutes of probes
    PYTHONPATH=.:platform .venv/bin/python -m bench.leaderboard_bench --url http://127.0.0.1:8000

Cold is the first view of a page after a stats refresh (its body is not cached yet): each cold sample asks
for a sort order not asked for before in this stats version, which renders the whole board again (the same
reads, the same bytes). Warm repeats a view already cached. Every request opens its own connection, sends
``Accept-Encoding: gzip`` as browsers do, and is timed from sending the request to the response's first
byte (TTFB) and to its last; bytes are the body as sent and decompressed. The ``X-Board-Cache`` header says
whether the body came from the cache; a sample whose answer is not the one intended (a refresh between
two requests turns a warm view cold) is counted under what it was.

The default views (each window, no other query) are pre-rendered by a worker right after each stats publish;
``--default-s`` seconds (spanning at least one 30 s refresh) of visits to ``/`` and ``/?window=7d``, one every
second in each language, show how a visitor meets them: warm when the pre-render was there first, stale (the
previous version) while the worker renders it, cold when the visit came before the worker claimed it.
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

SORTS = (
    "ttft_p50",
    "ttft_p90",
    "ttft_p99",
    "tps",
    "availability",
    "error_rate",
    "cache_hit",
    "quality",
    "n",
    "context_window",
    "max_output",
    "price_input",
    "price_output",
    "price_effective",
    "tokens_24h",
    "model",
)
TARGET_MS = 200.0  # issue 27: the leaderboard's first byte in under 200 ms


@dataclass
class Sample:
    ttfb_ms: float
    total_ms: float
    sent: int
    raw: int
    cache: str


@dataclass
class Page:
    name: str
    path: str
    samples: dict[str, list[Sample]] = field(default_factory=lambda: {"cold": [], "warm": [], "stale": []})


def fetch(host: str, port: int, path: str, language: str = "en") -> Sample:
    conn = http.client.HTTPConnection(host, port, timeout=30)
    headers = {"Accept-Encoding": "gzip", "Accept-Language": language, "User-Agent": "leaderboard-bench"}
    started = time.perf_counter()
    conn.request("GET", path, headers=headers)
    response = conn.getresponse()  # returns once the status line and headers are in: the first byte
    first = time.perf_counter()
    body = response.read()
    done = time.perf_counter()
    conn.close()
    if response.status != 200:
        raise SystemExit(f"GET {path} answered {response.status}")
    raw = gzip.decompress(body) if response.getheader("Content-Encoding") == "gzip" else body
    cache = response.getheader("X-Board-Cache") or "none"
    return Sample((first - started) * 1000, (done - started) * 1000, len(body), len(raw), cache)


def _with(path: str, query: str) -> str:
    return path + ("&" if "?" in path else "?") + query


def measure(host: str, port: int, page: Page, rounds: int, language: str) -> None:
    for i in range(rounds):
        sort = SORTS[i % len(SORTS)]
        direction = "desc" if (i // len(SORTS)) % 2 else "asc"
        cold = fetch(host, port, _with(page.path, f"sort={sort}&dir={direction}"), language)
        page.samples["warm" if cold.cache == "hit" else "cold"].append(cold)
        for _ in range(2):
            warm = fetch(host, port, _with(page.path, f"sort={sort}&dir={direction}"), language)
            page.samples["warm" if warm.cache == "hit" else "cold"].append(warm)


def measure_defaults(host: str, port: int, pages: list[Page], seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for page in pages:
            for language in ("en", "zh-hans"):
                got = fetch(host, port, page.path, language)
                page.samples[{"hit": "warm", "stale": "stale"}.get(got.cache, "cold")].append(got)
        time.sleep(1.0)


def _q(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]


def table(pages: list[Page]) -> str:
    lines = [
        "| page | view | n | TTFB p50 (ms) | TTFB p90 (ms) | TTFB max (ms) | total p50 (ms) | bytes sent (gzip) | bytes raw |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for page in pages:
        for view in ("cold", "warm", "stale"):
            got = page.samples[view]
            if not got:
                continue
            ttfb = [s.ttfb_ms for s in got]
            lines.append(
                f"| {page.name} | {view} | {len(got)} | {_q(ttfb, 0.5):.0f} | {_q(ttfb, 0.9):.0f} | {max(ttfb):.0f} | "
                f"{statistics.median(s.total_ms for s in got):.0f} | {statistics.median(s.sent for s in got):,.0f} | "
                f"{statistics.median(s.raw for s in got):,.0f} |"
            )
    return "\n".join(lines)


def _an_offering(host: str, port: int) -> tuple[int, str]:
    conn = http.client.HTTPConnection(host, port, timeout=30)
    conn.request("GET", "/leaderboard/data.json?sort=n&dir=desc")
    rows = json.loads(conn.getresponse().read())["rows"]
    conn.close()
    if not rows:
        raise SystemExit("the leaderboard lists no offering: is the catalog loaded?")
    return rows[0]["offering_id"], rows[0]["model"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="the running stack (make run)")
    parser.add_argument("--rounds", type=int, default=12, help="cold views per page (each followed by 2 warm)")
    parser.add_argument("--language", default="en")
    parser.add_argument("--default-s", type=float, default=40.0, help="seconds of visits to the default views")
    args = parser.parse_args(argv)
    parts = urlsplit(args.url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    offering, model = _an_offering(host, port)
    pages = [
        Page("leaderboard /", "/"),
        Page("leaderboard 7 d", "/?window=7d"),
        Page("model page", f"/models/{model}/"),
        Page("offering page", f"/offerings/{offering}/"),
    ]
    for page in pages:
        measure(host, port, page, args.rounds, args.language)
    defaults = [Page("default view /", "/"), Page("default view 7 d", "/?window=7d")]
    measure_defaults(host, port, defaults, args.default_s)
    print(table(pages + defaults))
    print(
        f"\ntarget: first byte under {TARGET_MS:.0f} ms. Reproduce: "
        f"PYTHONPATH=.:platform .venv/bin/python -m bench.leaderboard_bench --url {args.url} --rounds {args.rounds}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
