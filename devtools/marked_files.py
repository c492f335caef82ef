"""The test files that apply a pytest marker: ``python -m devtools.marked_files MARKER`` prints them.

The second runs of ``.ci/run`` (``make test-cluster``, ``make test-local``) select a marker; collecting the whole
suite to keep a tenth of it costs each of them 15 s of CPU, so they collect only these files. A test marked in
a file this does not find would silently miss its second run, so tests/conftest.py checks at every collection
that each test carrying one of :data:`SECOND_RUNS` lives in a file listed here, and stops the run otherwise.
"""

from __future__ import annotations

import re
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
SECOND_RUNS = ("cluster", "local_servers")


@cache
def marked_files(marker: str, tests: Path = TESTS) -> tuple[str, ...]:
    """Paths, relative to the folder above ``tests``, of the test modules whose text applies ``mark.<marker>``."""
    applied = re.compile(rf"\bmark\.{re.escape(marker)}\b")
    modules = [*tests.rglob("test_*.py"), *tests.rglob("*_test.py")]
    return tuple(sorted(str(path.relative_to(tests.parent)) for path in modules if applied.search(path.read_text())))


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m devtools.marked_files MARKER", file=sys.stderr)
        return 2
    print(" ".join(marked_files(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
