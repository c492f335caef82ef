"""docs/gateway-openapi.yaml shows the very schemas the gateway checks (routing/wire/schemas/): the file
is what the declarations render, and a JSON Schema validator reading the docs agrees with the gateway on
the refused bodies of the table test and on bodies drawn from the declarations."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator

from devtools.gateway_schema_doc import DOC, rendered
from routing.http.errors import GatewayError
from routing.wire.openapi import request_refs
from routing.wire.schema import validate
from routing.wire.schemas import BY_PATH, CHECKERS
from tests.routing.schema_strategies import mutation_of, valid
from tests.routing.test_dialect_schemas import CASES


def test_the_openapi_file_holds_the_declared_schemas():
    current = DOC.read_text()
    assert rendered(current) == current, "run: .venv/bin/python -m devtools.gateway_schema_doc"


def _json_schema(node: Any) -> Any:
    """OpenAPI 3.0 -> JSON Schema: ``nullable`` becomes "or null"; refs point into the file's components."""
    if isinstance(node, list):
        return [_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _json_schema(value) for key, value in node.items() if key != "nullable"}
    return {"anyOf": [out, {"type": "null"}]} if node.get("nullable") else out


def _validator(path: str) -> Draft7Validator:
    components = _json_schema(yaml.safe_load(DOC.read_text())["components"])
    return Draft7Validator({"$ref": f"#/components/schemas/{request_refs()[path]}", "components": components})


VALIDATORS = {path: _validator(path) for path in BY_PATH}


@pytest.mark.parametrize(("path", "body", "param"), CASES)
def test_the_docs_refuse_what_the_gateway_refuses(path, body, param):
    assert not VALIDATORS[path].is_valid(body), param


@pytest.mark.parametrize("path", sorted(BY_PATH))
@settings(max_examples=50, deadline=None, derandomize=True, database=None)
@given(data=st.data())
def test_the_docs_accept_what_the_gateway_declares(path, data):
    body = data.draw(valid(BY_PATH[path]))
    errors = [e.message[:200] for e in VALIDATORS[path].iter_errors(body)]
    assert errors == [], body


@pytest.mark.parametrize(("path", "body", "param"), CASES)
def test_the_compiled_fast_path_refuses_what_the_python_walk_refuses(path, body, param):
    assert not CHECKERS[path].fast_accepts(body), param


@pytest.mark.parametrize("path", sorted(BY_PATH))
@settings(max_examples=100, deadline=None, derandomize=True, database=None)
@given(data=st.data())
def test_the_compiled_fast_path_and_the_python_walk_agree(path, data):
    """On declared bodies and mutations of them: a body is refused by both or by neither."""
    body = data.draw(st.one_of(valid(BY_PATH[path]), mutation_of(valid(BY_PATH[path]))))
    try:
        validate(body, BY_PATH[path])
        walked = True
    except GatewayError:
        walked = False
    assert CHECKERS[path].fast_accepts(body) == walked, body
