"""Arguments for a simulated tool call, drawn to fit the tool's JSON schema."""

from __future__ import annotations

from typing import Any

from sim.draws import Draws

_WORDS = ("Paris", "Beijing", "report.txt", "celsius", "hello world", "main", "Shanghai", "42")


def sample(schema: Any, draws: Draws, depth: int = 0) -> Any:
    if not isinstance(schema, dict) or depth > 4:
        return None
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list) and branches:  # pydantic's Optional[...]: the first branch that is not null
        chosen = next((b for b in branches if isinstance(b, dict) and b.get("type") != "null"), branches[0])
        return sample(chosen, draws, depth)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][draws.below(len(schema["enum"]))]
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((item for item in kind if item != "null"), "string")
    if kind == "object":
        return _object(schema, draws, depth)
    if kind == "array":
        return [sample(schema.get("items") or {"type": "string"}, draws, depth + 1)]
    return _scalar(kind, draws)


def _object(schema: dict[str, Any], draws: Draws, depth: int) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    required = schema.get("required") or list(properties)
    return {name: sample(properties.get(name) or {"type": "string"}, draws, depth + 1) for name in required}


def _scalar(kind: str, draws: Draws) -> Any:
    if kind == "integer":
        return draws.below(100)
    if kind == "number":
        return round(draws.uniform() * 100, 2)
    if kind == "boolean":
        return draws.chance(0.5)
    if kind == "null":
        return None
    return _WORDS[draws.below(len(_WORDS))]
