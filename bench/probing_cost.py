"""The probing system's CPU, three ways:

    # the whole system as the processes make run starts (beat, default worker, probe workers, PostgreSQL,
    # Redis), demo catalog, default cadence, with and without probing (~9 min; bench.probing_processes)
    PYTHONPATH=.:platform .venv/bin/python -m devtools.devstack test -- \\
        .venv/bin/python -m bench.probing_cost --json probing-bench.json

    # the same read from a running make run tree, beside the first (bench.probing_live)
    PYTHONPATH=.:platform .venv/bin/python -m bench.probing_cost --live .data-probing --bench probing-bench.json

    # the probing work alone at any catalog size, one process (the scaling model; bench.probing_parts)
    PYTHONPATH=.:platform .venv/bin/python -m bench.probing_cost --offerings 1000 --measured-refreshes 2
"""

from __future__ import annotations

import runpy
import sys


def main(argv: list[str]) -> int:
    if "--offerings" in argv or "--measured-refreshes" in argv:
        module = "bench.probing_parts"  # sets up its database and Django when imported
    elif "--live" in argv:
        module = "bench.probing_live"
        argv = ["--data-dir" if arg == "--live" else arg for arg in argv]
    else:
        module = "bench.probing_processes"
    sys.argv = [module, *argv]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
