"""The official SDKs' own response types as a strict check of what a caller receives.

``check(T, raw)`` validates one JSON text (a whole answer or one streamed event) against the SDK type
``T`` and returns what is wrong with it, as sentences (empty when it conforms):

- pydantic validation of the JSON text with ``strict=True``: every field has its declared type with
  no coercion (no ``"1"`` for an int, no number for a string), a ``Literal`` or an enum holds one of
  its values, a field the type requires is present, and ``null`` only where the type is ``Optional``;
  a union (content blocks, output items, stream events) is resolved to its member by ``type``, so an
  answer validates as the member it says it is. Fields the type does not declare are allowed, as the
  SDKs allow them (the gateway's ``usage.cost``, what a provider adds to a passed-through answer).
- required though nullable: the OpenAI SDK is generated from OpenAI's API reference and gives every
  field that may be ``null`` a ``None`` default, so pydantic accepts a missing ``message.refusal`` or
  ``Response.error``; but the generator lists a type's required fields first (``id`` leading, the
  rest in alphabetical order), then its optional ones in the same order, so where that order starts
  over, the fields before it are the ones the reference requires. Those must be present, ``null``
  allowed. A type whose order never starts over, or whose pydantic-required fields are not all in
  that first run, says nothing this way and is held to pydantic's required fields only. Anthropic's
  SDK lists its types in one alphabetical run (required and optional together), so for it
  presence is pydantic's.
"""

from __future__ import annotations

import typing
from collections.abc import Iterator
from functools import cache
from typing import Any

import orjson
import pydantic


@cache
def _adapter(tp: Any) -> pydantic.TypeAdapter[Any]:
    return pydantic.TypeAdapter(tp)


@cache
def _members(tp: Any) -> dict[str, Any]:
    """A union of ``type``-tagged models -> {tag: member}; {} when ``tp`` is not one."""
    if typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    if typing.get_origin(tp) is not typing.Union:
        return {}
    out = {}
    for member in typing.get_args(tp):
        field = getattr(member, "model_fields", {}).get("type")
        for tag in typing.get_args(field.annotation) if field is not None else ():
            out[tag] = member
    return out


def check(tp: Any, raw: bytes | str) -> list[str]:
    """What is wrong with ``raw`` as an instance of ``tp`` (see the module docstring)."""
    members = _members(tp)
    if members:
        tag = _object(raw).get("type")
        if tag not in members:
            return [f"type {tag!r} is none of {sorted(members)}"]
        tp = members[tag]
    try:
        value = _adapter(tp).validate_json(raw, strict=True)
    except pydantic.ValidationError as exc:
        return [f"{'.'.join(map(str, e['loc']))}: {e['msg']} (got {e.get('input')!r:.80})" for e in exc.errors()]
    return [f"{where}: required (nullable) field {name!r} is missing" for where, name in _absent(value, "")]


def validated(tp: Any, raw: bytes | str) -> Any:
    """``raw`` as the SDK type (after ``check`` found it conforming): for the SDKs' stream helpers."""
    members = _members(tp)
    if members:
        tp = members[_object(raw)["type"]]
    return _adapter(tp).validate_json(raw)


def _object(raw: bytes | str) -> dict[str, Any]:
    value = orjson.loads(raw)
    return value if isinstance(value, dict) else {}


def _key(name: str) -> tuple[bool, str]:
    return (name != "id", name)


@cache
def required_fields(cls: type[pydantic.BaseModel]) -> frozenset[str]:
    """The fields the API reference requires, nullable ones included (see the module docstring)."""
    required = frozenset(name for name, field in cls.model_fields.items() if field.is_required())
    if not cls.__module__.startswith("openai."):
        return required
    names = list(cls.model_fields)
    restart = next((i for i in range(1, len(names)) if _key(names[i]) < _key(names[i - 1])), None)
    if restart is None or not required <= set(names[:restart]):
        return required
    return frozenset(names[:restart])


def _absent(value: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, pydantic.BaseModel):
        given = value.model_fields_set
        for name in sorted(required_fields(type(value)) - given):
            yield where or type(value).__name__, name
        for name in given:
            yield from _absent(getattr(value, name), f"{where}.{name}" if where else name)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _absent(item, f"{where}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _absent(item, f"{where}.{key}")


def sse_events(body: bytes) -> list[tuple[str | None, bytes]]:
    """(event name, data) of each server-sent event of a whole stream body, read independently of the
    gateway's own SSE code."""
    events = []
    for block in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        name, data = None, []
        for line in block.split(b"\n"):
            if line.startswith(b"event:"):
                name = line[6:].strip().decode()
            elif line.startswith(b"data:"):
                data.append(line[5:].removeprefix(b" "))
        if data:
            events.append((name, b"\n".join(data)))
    return events
