"""``make bench``: run every benchmark in turn; each prints its own table and reproduce command.

Each benchmark is a module ``bench.<name>`` with a ``main(argv) -> int``; they run
as subprocesses so one crashing does not hide the others' tables.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from urllib.parse import urlsplit, urlunsplit

# billing_e2e_bench is the billing headline (through the gateway); billing_bench injects synthetic events.
BENCHMARKS = [
    "sim_bench",
    "gateway_bench",
    "gateway_realistic",
    "gateway_scale",
    "gateway_workers",
    "billing_e2e_bench",
    "billing_bench",
    "end_states_bench",
    "eval_bench",
    "routing_sim",
    "forecast_bench",
]


def _own_redis_db(url: str, index: int) -> str:
    """Each benchmark gets its own Redis database: one bench's leftover usage stream
    (the gateway bench writes ~100k events) must not become the next one's backlog."""
    parts = urlsplit(url)
    if parts.scheme not in {"redis", "rediss"}:
        return url
    base = int(parts.path.lstrip("/") or 0)
    return urlunsplit(parts._replace(path=f"/{(base + index + 1) % 16}"))


def main() -> int:
    failures = []
    for index, name in enumerate(BENCHMARKS):
        if importlib.util.find_spec(f"bench.{name}") is None:
            print(f"\n== bench.{name}: not present ==")
            continue
        print(f"\n== bench.{name} ==", flush=True)
        started = time.monotonic()
        env = dict(os.environ)
        if env.get("REDIS_URL"):
            env["REDIS_URL"] = _own_redis_db(env["REDIS_URL"], index)
        code = subprocess.call([sys.executable, "-m", f"bench.{name}", *sys.argv[1:]], env=env)
        print(f"(bench.{name} finished in {time.monotonic() - started:.0f}s, exit {code})", flush=True)
        if code:
            failures.append(name)
    if failures:
        print(f"failed: {', '.join(failures)}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
