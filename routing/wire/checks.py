"""Strict checks of the fields the gateway reads, before anything is reserved or forwarded.

A wrong type or range is the caller's mistake: it gets a precise 400 naming the field, in the caller's
error shape, instead of being forwarded for a provider to reject (or, worse, to be read as a provider
failure and failed over).
"""

from __future__ import annotations

from typing import Any

from contracts.tokens import MAX_NESTING, TooDeeplyNested, count_value_tokens
from routing.errors import invalid_request

Body = dict[str, Any]

MAX_MODEL_NAME = 256


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def model_name(body: Body, message: str) -> str:
    model = body.get("model")
    if not isinstance(model, str) or not model.strip():
        raise invalid_request(message, param="model")
    if len(model) > MAX_MODEL_NAME:
        raise invalid_request(f"'model' is longer than {MAX_MODEL_NAME} characters.", param="model")
    return model


def optional_bool(body: Body, name: str) -> None:
    if body.get(name) is not None and not isinstance(body[name], bool):
        raise invalid_request(f"'{name}' must be a boolean, not {type(body[name]).__name__}.", param=name)


def optional_positive_int(body: Body, name: str) -> None:
    value = body.get(name)
    if value is not None and not (_is_int(value) and value >= 1):
        raise invalid_request(f"'{name}' must be an integer of at least 1, not {value!r}.", param=name)


def optional_range(body: Body, name: str, low: float, high: float) -> None:
    value = body.get(name)
    if value is not None and not (_is_number(value) and low <= value <= high):
        raise invalid_request(f"'{name}' must be a number from {low:g} to {high:g}, not {value!r}.", param=name)


def optional_object(body: Body, name: str) -> None:
    if body.get(name) is not None and not isinstance(body[name], dict):
        raise invalid_request(f"'{name}' must be an object.", param=name)


def optional_list(body: Body, name: str) -> None:
    if body.get(name) is not None and not isinstance(body[name], list):
        raise invalid_request(f"'{name}' must be an array.", param=name)


def optional_stop(body: Body, name: str, *, single_allowed: bool) -> None:
    """Stop sequences: an array of strings (or one string, in the OpenAI dialect); they are translated."""
    value = body.get(name)
    if value is None or (single_allowed and isinstance(value, str)):
        return
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        kind = "a string or an array of strings" if single_allowed else "an array of strings"
        raise invalid_request(f"'{name}' must be {kind}.", param=name)


def message_list(body: Body, roles: frozenset[str], message: str) -> list[Any]:
    """A non-empty array of objects, each with a known role and string or array content."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise invalid_request(message, param="messages")
    for index, item in enumerate(messages):
        param = f"messages[{index}]"
        if not isinstance(item, dict):
            raise invalid_request(f"{param} must be an object with 'role' and 'content'.", param=param)
        role = item.get("role")
        if not isinstance(role, str) or role not in roles:  # a dict or list role is unhashable: never a lookup
            allowed = ", ".join(sorted(roles))
            raise invalid_request(f"{param}.role must be one of {allowed}.", param=f"{param}.role")
        content = item.get("content")
        if content is not None and not isinstance(content, str | list):
            raise invalid_request(f"{param}.content must be a string or an array.", param=f"{param}.content")
    return messages


# Walked with the input-token estimate (and refused there when too deep); every other field is walked here
# (the Responses ``input`` too: it is translated, not estimated, as it arrives).
_ESTIMATED_FIELDS = frozenset(("messages",))


def nesting(body: Body) -> None:
    """Refuse a body with any field nested deeper than ``MAX_NESTING``, before anything is reserved: a
    deep value in a field we only forward would otherwise fail when the body is re-encoded (a 500).
    The one iterative walk of contracts.tokens does it (its token count is not needed here)."""
    try:
        count_value_tokens({k: v for k, v in body.items() if k not in _ESTIMATED_FIELDS})
    except TooDeeplyNested:
        raise invalid_request(f"Request JSON is nested too deeply: more than {MAX_NESTING} levels.") from None
