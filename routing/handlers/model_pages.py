"""``GET /v1/models`` query parameters: ``limit``, ``after_id`` and ``before_id`` as Anthropic's Models API
pages them (its SDK follows ``has_more`` and ``last_id``). OpenAI's list has no parameters and its SDK
sends none: without them the whole list comes back in one page, as before. A value the gateway cannot
honour is a 400 naming it, never ignored."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from routing.http.errors import invalid_request

MAX_LIMIT = 1000  # Anthropic's bound on ``limit``
PARAMS = ("limit", "after_id", "before_id")

Entry = dict[str, Any]


def query(raw: bytes) -> dict[str, str]:
    """The page parameters of a query string; an unknown or repeated one is refused."""
    try:
        parsed = parse_qs(raw.decode("latin-1"), keep_blank_values=True, strict_parsing=bool(raw))
    except ValueError as exc:
        raise invalid_request("The query string is malformed.") from exc
    for name, values in parsed.items():
        if name not in PARAMS:
            raise invalid_request(
                f"Unknown query parameter {name!r}: GET /v1/models takes {', '.join(PARAMS)}.", param=name
            )
        if len(values) > 1:
            raise invalid_request(f"Query parameter {name!r} is given more than once.", param=name)
    return {name: values[0] for name, values in parsed.items()}


def _limit(value: str | None) -> int | None:
    if value is None:
        return None
    if not value.isdigit() or not 1 <= int(value) <= MAX_LIMIT:
        raise invalid_request(f"'limit' must be an integer from 1 to {MAX_LIMIT}, not {value!r}.", param="limit")
    return int(value)


def _position(data: list[Entry], name: str, model_id: str) -> int:
    for index, entry in enumerate(data):
        if entry["id"] == model_id:
            return index
    raise invalid_request(f"'{name}' {model_id!r} is not a model id of this list.", param=name)


def page(data: list[Entry], params: dict[str, str]) -> dict[str, Any]:
    """One page of the list in the shape both SDKs parse: ``has_more`` says whether entries follow it."""
    if "after_id" in params and "before_id" in params:
        raise invalid_request("Give 'after_id' or 'before_id', not both.", param="before_id")
    limit = _limit(params.get("limit"))
    start, end = 0, len(data)
    if "after_id" in params:
        start = _position(data, "after_id", params["after_id"]) + 1
    if "before_id" in params:
        end = _position(data, "before_id", params["before_id"])
    if limit is not None and "before_id" in params:
        start = max(start, end - limit)  # the entries just before it, as Anthropic pages backwards
    elif limit is not None:
        end = min(end, start + limit)
    items = data[start:end]
    more = end < len(data) if "before_id" not in params else start > 0
    first, last = (items[0]["id"], items[-1]["id"]) if items else (None, None)
    return {"object": "list", "data": items, "has_more": more, "first_id": first, "last_id": last}
