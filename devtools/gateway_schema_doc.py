"""Writes the gateway's declared request schemas (routing/wire/openapi.py) at the end of
docs/gateway-openapi.yaml, under ``components.schemas`` after the marker line; ``--check`` exits 1 when
the file is not what the declarations give (tests/routing/test_schema_docs.py runs the same check).

    .venv/bin/python -m devtools.gateway_schema_doc [--check]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from routing.wire.openapi import request_components

DOC = Path(__file__).resolve().parents[1] / "docs" / "gateway-openapi.yaml"
MARKER = "    # Generated from routing/wire/schemas/ by devtools/gateway_schema_doc.py: do not edit below this line.\n"
INDENT = "    "  # under components: schemas:


def rendered(current: str) -> str:
    """``current`` up to the marker (added when missing), then the declared schemas."""
    head = current.split(MARKER, 1)[0]
    body = yaml.safe_dump(request_components(), sort_keys=False, default_flow_style=None, width=110)
    return head + MARKER + "".join(INDENT + line if line.strip() else line for line in body.splitlines(True))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is out of date; write nothing")
    args = parser.parse_args(argv)
    current = DOC.read_text()
    wanted = rendered(current)
    if args.check:
        return 0 if wanted == current else 1
    DOC.write_text(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main())
