"""The dialects' declared request schemas (routing/wire/schemas/) as OpenAPI 3.0 components: what
docs/gateway-openapi.yaml shows under ``components.schemas`` (written by devtools/gateway_schema_doc.py,
kept equal by tests/routing/test_schema_docs.py)."""

from __future__ import annotations

from typing import Any

from routing.wire.schema import Refs
from routing.wire.schemas import BY_PATH


def request_components() -> dict[str, dict[str, Any]]:
    """Every named schema the four request bodies use, each once, requests first."""
    refs = Refs()
    for spec in BY_PATH.values():
        spec.schema(refs)
    return refs.schemas


def request_refs() -> dict[str, str]:
    """path -> the component name of its request body."""
    return {path: spec.name for path, spec in BY_PATH.items()}
