"""``make bench``: run every benchmark in turn; each prints its own table and reproduce command.

Each benchmark is a module ``bench.<name>`` with a ``main(argv) -> int``; they run
as subprocesses so one crashing does not hide the others' tables.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time

BENCHMARKS = ["sim_bench", "gateway_bench", "billing_bench", "eval_bench"]


def main() -> int:
    failures = []
    for name in BENCHMARKS:
        if importlib.util.find_spec(f"bench.{name}") is None:
            print(f"\n== bench.{name}: not present ==")
            continue
        print(f"\n== bench.{name} ==", flush=True)
        started = time.monotonic()
        code = subprocess.call([sys.executable, "-m", f"bench.{name}", *sys.argv[1:]])
        print(f"(bench.{name} finished in {time.monotonic() - started:.0f}s, exit {code})", flush=True)
        if code:
            failures.append(name)
    if failures:
        print(f"failed: {', '.join(failures)}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
