"""A small declarative schema: the request shapes of the caller dialects, checked on the hot path and
rendered as JSON Schema for the docs (routing/wire/openapi.py), so the two cannot drift apart.

Only what the gateway reads, translates or routes on is declared; any other field of an object passes
through untouched, and so does an object of a tagged kind the table does not list (a new content part,
a provider's built-in tool). ``null`` for an optional field means "absent", as the OpenAI SDKs and most
clients treat it. A check walks the parsed body once and builds no copy; the path of a refused field is
put together only on the way out of a refusal (``Invalid.path``). On the request path the compiled form
(routing/wire/fast_check.py) answers first and this walk runs only for a body it refuses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from routing.http.errors import GatewayError, invalid_request

SHOWN_CHARS = 40  # a refused value is quoted up to this long: a 10 MB string is not echoed back


class Invalid(Exception):
    """One refused value: the rule it broke and, filled in while unwinding, its path (innermost first)."""

    def __init__(self, rule: str, value: Any = None, *, key: str | None = None, shown: bool = True) -> None:
        super().__init__(rule)
        self.rule = rule
        self.value = value
        self.shown = shown
        self.path: list[str | int] = [] if key is None else [key]


class Spec:
    """One JSON value's rules. ``kind`` names its JSON type in messages ("a string", "an array")."""

    __slots__ = ()
    kind = "a value"
    types: tuple[type, ...] = (dict, list, str, int, float, bool)  # Python types it may accept: how Either picks

    def check(self, value: Any) -> None:
        """Raise ``Invalid`` when ``value`` breaks a rule."""

    def schema(self, refs: Refs) -> dict[str, Any]:
        return {}


class Refs:
    """Named specs met while rendering: each is rendered once, under components/schemas."""

    def __init__(self) -> None:
        self.schemas: dict[str, dict[str, Any]] = {}

    def ref(self, name: str, spec: Spec) -> dict[str, Any]:
        if name not in self.schemas:
            self.schemas[name] = {}  # placed first: a spec that refers to itself ends here
            self.schemas[name] = spec.schema(self)
        return {"$ref": f"#/components/schemas/{name}"}


class Bool(Spec):
    __slots__ = ()
    kind = "a boolean"
    types = (bool,)

    def check(self, value: Any) -> None:
        if type(value) is not bool:
            raise Invalid("must be a boolean", value)

    def schema(self, refs: Refs) -> dict[str, Any]:
        return {"type": "boolean"}


class Str(Spec):
    __slots__ = ("enum", "max_len", "nonblank")
    kind = "a string"
    types = (str,)

    def __init__(self, *, enum: tuple[str, ...] = (), max_len: int | None = None, nonblank: bool = False) -> None:
        self.enum = frozenset(enum)
        self.max_len = max_len
        self.nonblank = nonblank

    def check(self, value: Any) -> None:
        if type(value) is not str:
            raise Invalid("must be a string", value)
        if self.enum and value not in self.enum:
            raise Invalid(f"must be one of {', '.join(sorted(self.enum))}", value)
        if self.nonblank and not value.strip():
            raise Invalid("must be a non-empty string", value)
        if self.max_len is not None and len(value) > self.max_len:
            raise Invalid(f"must be at most {self.max_len} characters long", shown=False)

    def schema(self, refs: Refs) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "string"}
        if self.enum:
            out["enum"] = sorted(self.enum)
        if self.nonblank:
            out["minLength"] = 1
            out["pattern"] = r"\S"
        if self.max_len is not None:
            out["maxLength"] = self.max_len
        return out


class Int(Spec):
    __slots__ = ("high", "low")
    kind = "an integer"
    types = (int,)

    def __init__(self, low: int, high: int | None = None) -> None:
        self.low = low
        self.high = high

    def check(self, value: Any) -> None:
        if type(value) is not int or value < self.low or (self.high is not None and value > self.high):
            span = f"of at least {self.low}" if self.high is None else f"from {self.low} to {self.high}"
            raise Invalid(f"must be an integer {span}", value)

    def schema(self, refs: Refs) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "integer", "minimum": self.low}
        if self.high is not None:
            out["maximum"] = self.high
        return out


class Num(Spec):
    __slots__ = ("high", "low")
    kind = "a number"
    types = (int, float)

    def __init__(self, low: float, high: float) -> None:
        self.low = low
        self.high = high

    def check(self, value: Any) -> None:
        kind = type(value)
        if (kind is not int and kind is not float) or not self.low <= value <= self.high:
            raise Invalid(f"must be a number from {self.low:g} to {self.high:g}", value)

    def schema(self, refs: Refs) -> dict[str, Any]:
        return {"type": "number", "minimum": self.low, "maximum": self.high}


class Arr(Spec):
    __slots__ = ("items", "min_items")
    kind = "an array"
    types = (list,)

    def __init__(self, items: Spec, *, min_items: int = 0) -> None:
        self.items = items
        self.min_items = min_items

    def check(self, value: Any) -> None:
        if type(value) is not list:
            raise Invalid("must be an array", value)
        if len(value) < self.min_items:
            raise Invalid("must be a non-empty array", value)
        check = self.items.check
        for index, item in enumerate(value):
            try:
                check(item)
            except Invalid as err:
                err.path.append(index)
                raise

    def schema(self, refs: Refs) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "array", "items": self.items.schema(refs)}
        if self.min_items:
            out["minItems"] = self.min_items
        return out


class Obj(Spec):
    """An object whose listed fields follow their specs; ``required`` ones must be there and not null.
    Every other field passes through. ``name``: rendered once under that name in the docs."""

    __slots__ = ("fields", "name", "required")
    kind = "an object"
    types = (dict,)

    def __init__(self, fields: Mapping[str, Spec], *, required: tuple[str, ...] = (), name: str = "") -> None:
        self.fields = dict(fields)
        self.required = required
        self.name = name

    def check(self, value: Any) -> None:
        if type(value) is not dict:
            raise Invalid("must be an object", value)
        self.check_fields(value)

    def check_fields(self, value: dict[str, Any]) -> None:
        for key in self.required:
            if value.get(key) is None:
                raise Invalid("is required", key=key, shown=False)
        fields = self.fields
        for key, item in value.items():
            spec = fields.get(key)
            if spec is not None and item is not None:
                try:
                    spec.check(item)
                except Invalid as err:
                    err.path.append(key)
                    raise

    def schema(self, refs: Refs) -> dict[str, Any]:
        if self.name:
            return refs.ref(self.name, _Body(self))
        return self.body_schema(refs)

    def body_schema(self, refs: Refs, tag: tuple[str, str] | None = None) -> dict[str, Any]:
        properties = {key: _optional(spec.schema(refs), key in self.required) for key, spec in self.fields.items()}
        required = list(self.required)
        if tag is not None:
            properties[tag[0]] = {"type": "string", "enum": [tag[1]]}
            required = [tag[0], *required]
        out: dict[str, Any] = {"type": "object", "properties": properties}  # other fields: allowed (the default)
        if required:
            out["required"] = required
        return out


class _Body(Spec):
    """An ``Obj`` rendered in place (under its name in the docs)."""

    __slots__ = ("obj",)

    def __init__(self, obj: Obj) -> None:
        self.obj = obj

    def schema(self, refs: Refs) -> dict[str, Any]:
        return self.obj.body_schema(refs)


def _optional(schema: dict[str, Any], required: bool) -> dict[str, Any]:
    """An optional field may be ``null`` (absent); OpenAPI 3.0 says so next to a ``$ref`` with ``allOf``."""
    if required or not schema:
        return schema
    if "$ref" in schema:
        return {"allOf": [schema], "nullable": True}
    return {**schema, "nullable": True}


class Either(Spec):
    """One of several JSON types (``a string or an array``): the branch is picked by the value's type."""

    __slots__ = ("branches", "by_type")

    def __init__(self, *branches: Spec) -> None:
        self.branches = branches
        self.by_type: dict[type, Spec] = {}
        for branch in branches:
            for kind in branch.types:
                self.by_type.setdefault(kind, branch)

    @property
    def kind(self) -> str:  # type: ignore[override]
        return " or ".join(branch.kind for branch in self.branches)

    def check(self, value: Any) -> None:
        branch = self.by_type.get(type(value))  # one lookup, not a test per branch: this runs per message
        if branch is None:
            raise Invalid(f"must be {self.kind}", value)
        branch.check(value)

    def schema(self, refs: Refs) -> dict[str, Any]:
        return {"oneOf": [branch.schema(refs) for branch in self.branches]}


class Tagged(Spec):
    """An object whose ``tag`` field (``type``) names its kind; listed kinds follow their own fields, an
    unlisted kind passes through unless ``closed``. ``default``: the kind of an object without the tag (a
    Responses input item with only a ``role`` is a message); without a default the tag is required."""

    __slots__ = ("closed", "default", "name", "tag", "variants")
    kind = "an object"
    types = (dict,)

    def __init__(
        self, tag: str, variants: Mapping[str, Obj], *, default: str | None = None, closed: bool = False, name: str = ""
    ) -> None:
        self.tag = tag
        self.variants = dict(variants)
        self.default = default
        self.closed = closed
        self.name = name

    def check(self, value: Any) -> None:
        if type(value) is not dict:
            raise Invalid("must be an object", value)
        kind = value.get(self.tag)
        if kind is None:
            if self.default is None:
                raise Invalid("is required", key=self.tag, shown=False)
            kind = self.default
        elif type(kind) is not str:
            raise Invalid("must be a string", kind, key=self.tag)
        variant = self.variants.get(kind)
        if variant is not None:
            variant.check_fields(value)
        elif self.closed:
            raise Invalid(f"must be one of {', '.join(sorted(self.variants))}", kind, key=self.tag)

    def schema(self, refs: Refs) -> dict[str, Any]:
        if self.name:
            return refs.ref(self.name, _TaggedBody(self))
        return self.body_schema(refs)

    def body_schema(self, refs: Refs) -> dict[str, Any]:
        known = sorted(self.variants)
        other: dict[str, Any] = {
            "type": "object",
            "properties": {self.tag: {"type": "string", "not": {"enum": known}}},
            "required": [self.tag],  # without it, an object is of the default kind (or refused)
            "description": "A kind not listed here passes through as it is.",
        }
        variants = [self.variants[kind].body_schema(refs, tag=(self.tag, kind)) for kind in known]
        if self.default is not None:
            untagged = self.variants[self.default].body_schema(refs)
            untagged["not"] = {"required": [self.tag]}
            variants.append(untagged)
        return {"anyOf": variants if self.closed else [*variants, other]}


class _TaggedBody(Spec):
    __slots__ = ("tagged",)

    def __init__(self, tagged: Tagged) -> None:
        self.tagged = tagged

    def schema(self, refs: Refs) -> dict[str, Any]:
        return self.tagged.body_schema(refs)


def param_of(path: list[str | int]) -> str:
    """``["role", 0, "messages"]`` (innermost first) -> ``messages[0].role``."""
    out = ""
    for step in reversed(path):
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out


def shown(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def refusal(err: Invalid) -> GatewayError:
    """The caller's 400: the field as ``param`` and named in the message (Anthropic's shape has no param)."""
    param = param_of(err.path)
    got = f", not {shown(err.value)}" if err.shown else ""
    return invalid_request(f"'{param}' {err.rule}{got}.", param=param or None)


def validate(body: dict[str, Any], spec: Obj) -> None:
    """Refuse the body (a 400 naming the first field that breaks a rule) or return."""
    try:
        spec.check_fields(body)
    except Invalid as err:
        raise refusal(err) from None
