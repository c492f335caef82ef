"""OpenAPI post-processing: every operation documents its error responses in the one error shape."""

from __future__ import annotations

from typing import Any

ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "param"],
            "properties": {
                "code": {"type": "string", "description": "stable machine code, e.g. invalid_json"},
                "message": {"type": "string"},
                "param": {"type": "string", "nullable": True},
            },
        }
    },
}
_DESCRIPTIONS = {
    "400": "Invalid input",
    "401": "Not authenticated",
    "403": "Not allowed",
    "404": "Not found (or not yours)",
    "409": "Conflicts with the resource's state (e.g. a revoked or rotated key)",
    "413": "Request body too large",
}


def _error_codes(path: str, operation: dict[str, Any]) -> list[str]:
    codes = ["400"]
    authenticated = any(requirement for requirement in operation.get("security", []))
    if authenticated:
        codes += ["401", "403", "404"]
        if "{" in path and "requestBody" in operation:
            codes.append("409")
    elif "{" in path:
        codes.append("404")
    if "requestBody" in operation:
        codes.append("413")
    return codes


def add_error_responses(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    body = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for path, item in result.get("paths", {}).items():
        for operation in item.values():
            responses = operation.setdefault("responses", {})
            for code in _error_codes(path, operation):
                responses.setdefault(code, {"description": _DESCRIPTIONS[code], "content": body})
    return result
