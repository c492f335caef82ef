"""Development tooling, not part of the product: ``make run`` and ``make test`` start from here.

``devstack`` (embedded PostgreSQL and Redis when none are configured), ``runall`` (every process of the
stack under ``supervisor``/``processes``, ready when ``stack_ready`` says so), ``local_stripe`` (the offline
Stripe of ``fakes``) and ``ports`` (free loopback ports for the servers the stack and the tests start).
No product package imports this one (an import-linter contract).
"""

import os as _os
import sys as _sys
from pathlib import Path as _Path

# Run from a checkout as ``python -m devtools.<tool>`` (the README's commands) without PYTHONPATH: the
# platform's packages live in the plain folder platform/ (so that ``import platform`` stays the stdlib
# module), and the commands a tool starts (pytest, benchmarks, the stack) import them too.
_ROOT = _Path(__file__).resolve().parents[1]
for _entry in (str(_ROOT), str(_ROOT / "platform")):
    if _entry not in _sys.path:
        _sys.path.append(_entry)
    if _entry not in _os.environ.get("PYTHONPATH", "").split(_os.pathsep):
        _os.environ["PYTHONPATH"] = _os.pathsep.join(filter(None, (_os.environ.get("PYTHONPATH", ""), _entry)))
