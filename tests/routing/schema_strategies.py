"""Hypothesis strategies drawn from the dialects' declared request schemas (routing/wire/schemas/):
bodies the schema accepts, and mutations of them (one value anywhere replaced by arbitrary JSON, or
removed)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from routing.wire import schema as s

MAX_DEPTH = 3  # a namespace of namespaces... is cut here: its tools come back empty
SMALL_TOKENS = 24  # token counts are drawn small, so valid calls stay cheap for the simulated providers

INTEGERS = st.integers(-(2**63), 2**64 - 1)  # what JSON encoders write (orjson: i64 and u64)
JSON = st.recursive(
    st.none() | st.booleans() | INTEGERS | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
UNKNOWN: st.SearchStrategy[dict[str, Any]] = st.dictionaries(
    st.sampled_from(["x_extra", "x_note"]), INTEGERS | st.text(max_size=4) | st.builds(dict), max_size=1
)


_BUILT: dict[tuple[int, int], st.SearchStrategy[Any]] = {}


def valid(spec: s.Spec, depth: int = 0) -> st.SearchStrategy[Any]:
    """Values ``spec`` accepts (with now and then a field it does not know, which must pass through).
    Built once per spec and depth: building and validating a strategy costs far more than drawing."""
    key = (id(spec), depth)
    if key not in _BUILT:
        _BUILT[key] = _build(spec, depth)
    return _BUILT[key]


def _build(spec: s.Spec, depth: int) -> st.SearchStrategy[Any]:
    if isinstance(spec, s.Str):
        return _string(spec)
    if isinstance(spec, s.Int):
        return st.integers(spec.low, min(spec.high or spec.low + SMALL_TOKENS, spec.low + SMALL_TOKENS))
    if isinstance(spec, s.Num):
        return st.floats(spec.low, spec.high, allow_nan=False)
    if isinstance(spec, s.Bool):
        return st.booleans()
    if isinstance(spec, s.Arr):
        if depth >= MAX_DEPTH:
            return st.builds(list)  # a new list each time: a shared one would alias between bodies
        return st.lists(valid(spec.items, depth + 1), min_size=spec.min_items, max_size=max(spec.min_items, 2))
    if isinstance(spec, s.Obj):
        return _object(spec, depth)
    if isinstance(spec, s.Tagged):
        return _tagged(spec, depth)
    if isinstance(spec, s.Either):
        return st.one_of([valid(branch, depth) for branch in spec.branches])
    return JSON


def _string(spec: s.Str) -> st.SearchStrategy[str]:
    if spec.enum:
        return st.sampled_from(sorted(spec.enum))
    text = st.text(min_size=1 if spec.nonblank else 0, max_size=min(spec.max_len or 8, 8))
    return text.filter(str.strip) if spec.nonblank else text


def _object(spec: s.Obj, depth: int, tag: tuple[str, str] | None = None) -> st.SearchStrategy[dict[str, Any]]:
    required = {key: valid(spec.fields[key], depth + 1) for key in spec.required}
    optional = {key: valid(field, depth + 1) for key, field in spec.fields.items() if key not in spec.required}
    if tag is not None:
        required[tag[0]] = st.just(tag[1])
    declared = st.fixed_dictionaries(required, optional=optional)
    return st.builds(lambda body, extra: {**extra, **body}, declared, UNKNOWN)


def _tagged(spec: s.Tagged, depth: int) -> st.SearchStrategy[dict[str, Any]]:
    kinds = [_object(variant, depth, (spec.tag, kind)) for kind, variant in sorted(spec.variants.items())]
    if spec.default is not None:
        kinds.append(_object(spec.variants[spec.default], depth))
    if not spec.closed:
        kinds.append(st.fixed_dictionaries({spec.tag: st.sampled_from(["x_future_kind", "web_search"])}))
    return st.one_of(kinds)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value (the root excluded), parents first."""
    out: list[tuple[Any, ...]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        out.append((*prefix, key))
        out.extend(paths(item, (*prefix, key)))
    return out


def mutated(body: dict[str, Any], path: tuple[Any, ...], replacement: Any, *, remove: bool) -> dict[str, Any]:
    """A copy of ``body`` with the value at ``path`` replaced (or removed)."""
    import copy

    out = copy.deepcopy(body)
    parent: Any = out
    for step in path[:-1]:
        parent = parent[step]
    if remove:
        del parent[path[-1]]
    else:
        parent[path[-1]] = replacement
    return out


@st.composite
def mutation_of(draw: st.DrawFn, bodies: st.SearchStrategy[dict[str, Any]], most: int = 3) -> dict[str, Any]:
    """A body from ``bodies`` with 1 to ``most`` of its values (anywhere) replaced by arbitrary JSON or removed."""
    body = draw(bodies)
    for _ in range(draw(st.integers(1, most))):
        places = paths(body)
        if not places:
            break
        path = draw(st.sampled_from(places))
        body = mutated(body, path, draw(JSON), remove=draw(st.booleans()))
    return body
