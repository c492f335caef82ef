"""What every Python client script shares: the target offerings, the prompts, the schema, and the runner that prints
one JSON object so that the test reports every failing case at once."""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel

BASE_URL = os.environ["BASE_URL"]
KEY = os.environ["KEY"]
TARGETS: list[dict[str, Any]] = json.loads(os.environ["TARGETS"])
TOOL_PROMPT = os.environ["TOOL_PROMPT"]
STRUCTURED_PROMPT = os.environ["STRUCTURED_PROMPT"]
TOOL_RESULT = os.environ["TOOL_RESULT"]
STREAM_PROMPT = "Tell me about routing."


class Weather(BaseModel):
    city: str
    temperature_c: int
    sunny: bool
    wind: Literal["calm", "breeze", "storm"]
    tags: list[str]


Case = Callable[[dict[str, Any]], dict[str, Any]]


def run(cases_for: Callable[[str], dict[str, Case]]) -> None:
    """The variants in argv (a library's chat models or providers), each through ``cases_for(variant)``; printed
    as ``{variant: {target label: {case: result or {"error": ...}}}}``."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for variant in sys.argv[1:]:
        out[variant] = {}
        for target in TARGETS:
            results = out[variant][target["label"]] = {}
            for name, case in cases_for(variant).items():
                try:
                    results[name] = case(target)
                except Exception:  # noqa: BLE001 - every failure is reported to the test, case by case
                    results[name] = {"error": traceback.format_exc()[-1500:]}
    print(json.dumps(out))
