"""Third-party clients, pinned, against the running stack: each does a stream, a tool round trip and a structured
output on an OpenAI-dialect offering (gpt-4.1-mini at ``openai``) and an Anthropic-dialect one (claude-sonnet-4.5
pinned to ``anthropic`` with the gateway's provider preference: its ``openrouter`` offering speaks OpenAI).

One subprocess per client (its scripts are in clients/: a Node script on the pinned npm packages of
tests/npm_tools.py, a Python script in the clients' own venv of tests/py_tools.py) runs every case for both
offerings and prints what it got; the tests read that, one per client and offering. What a client validates
itself (a zod or pydantic schema, its tool call parsing) is part of what passes. The simulated model calls the
tool the prompt names (sim/directed.py), answers in text once the tool's result is back, and fills the schema
it is given (sim/toolargs.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.npm_tools import npm_package
from tests.py_tools import clients_python
from tests.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.deployed, pytest.mark.timeout(600)]

SCRIPTS = Path(__file__).resolve().parent / "clients"
TARGETS = [
    # `only` without `allow_fallbacks: false`: an offering whose integrity probes are still pending right after the
    # tree starts is served (unverified) when it is the model's last candidate, not refused (docs/routing.md)
    {"label": "openai-dialect", "model": "gpt-4.1-mini", "provider": {"only": ["openai"]}},
    {"label": "anthropic-dialect", "model": "claude-sonnet-4.5", "provider": {"only": ["anthropic"]}},
]
TOOL_PROMPT = 'What is the weather in Paris? Call the tool get_weather with {"city": "Paris"}'
TOOL_RESULT = "18 degrees Celsius, sunny, a light breeze"
STRUCTURED_PROMPT = "Report the weather in Paris today."
# client -> (runtime, script, variant): the variants of one script run in one process (one import of the library)
CLIENTS: dict[str, tuple[str, str, str]] = {
    "openai-node-chat": ("node", "openai_node.cjs", "chat"),
    "openai-node-responses": ("node", "openai_node.cjs", "responses"),
    "ai-sdk-responses": ("node", "ai_sdk.cjs", "responses"),
    "ai-sdk-chat": ("node", "ai_sdk.cjs", "chat"),
    "ai-sdk-anthropic": ("node", "ai_sdk.cjs", "messages"),
    "langchain-openai": ("python", "langchain_client.py", "openai"),
    "langchain-anthropic": ("python", "langchain_client.py", "anthropic"),
    "litellm-openai": ("python", "litellm_client.py", "openai"),
    "litellm-anthropic": ("python", "litellm_client.py", "anthropic"),
    "instructor": ("python", "instructor_client.py", "tools-mode"),
}
TOOL_FINISH = {"tool_calls", "tool_use", "tool-calls"}
TEXT_FINISH = {"stop", "end_turn"}


@pytest.fixture(scope="module")
def client_key(stack) -> str:
    """A key of the demo tenant for the matrix alone."""
    result = stack.make("manage", "ARGS=create_api_key --tenant demo --name client-matrix")
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.fixture(scope="module")
def client_results(stack, client_key) -> dict[str, dict[str, Any]]:
    """Every client's results, keyed by client: the scripts run side by side (they mostly wait on imports and the
    network), installed first (both installs under one lock, so before the threads start)."""
    modules = npm_package("ai").parent
    python = clients_python()
    scripts: dict[tuple[str, str], list[str]] = {}
    for runtime, script, variant in CLIENTS.values():
        scripts.setdefault((runtime, script), []).append(variant)
    env = {
        **os.environ,
        "BASE_URL": stack.base_url,
        "KEY": client_key,
        "TARGETS": json.dumps(TARGETS),
        "TOOL_PROMPT": TOOL_PROMPT,
        "TOOL_RESULT": TOOL_RESULT,
        "STRUCTURED_PROMPT": STRUCTURED_PROMPT,
        "NODE_PATH": str(modules),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no fetch of LiteLLM's price list from the internet
    }
    if shutil.which("node") is None:
        scripts = {key: variants for key, variants in scripts.items() if key[0] != "node"}
    with ThreadPoolExecutor(max_workers=len(scripts)) as pool:
        runs = {key: pool.submit(_run, key, variants, python, env) for key, variants in scripts.items()}
        by_script = {key: run.result() for key, run in runs.items()}
    return {
        client: by_script[(runtime, script)][variant]
        for client, (runtime, script, variant) in CLIENTS.items()
        if (runtime, script) in by_script
    }


def _run(key: tuple[str, str], variants: list[str], python: Path, env: dict[str, str]) -> dict[str, Any]:
    runtime, script = key
    command = ["node" if runtime == "node" else str(python), str(SCRIPTS / script), *variants]
    started = time.monotonic()
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240, cwd=SCRIPTS)
    print(f"\n[client-matrix] {script} {' '.join(variants)}: {time.monotonic() - started:.1f}s")
    if result.returncode != 0:
        failed = {"run": {"error": result.stdout[-2000:] + result.stderr[-3000:]}}
        return {variant: {target["label"]: failed for target in TARGETS} for variant in variants}
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def _check_stream(got: dict[str, Any]) -> None:
    assert got["chunks"] >= 2 and got["text"].strip(), got
    if got.get("output_tokens") is not None:  # where the client exposes usage
        assert got["output_tokens"] > 0 and got["input_tokens"] > 0, got


def _check_tools(got: dict[str, Any]) -> None:
    assert got["tool"] == "get_weather" and got["arguments"] == {"city": "Paris"}, got
    assert got["first_finish"] in TOOL_FINISH, got
    assert got["answer"].strip() and got["finish"] in TEXT_FINISH, got  # a text answer after the tool's result


def _check_structured(got: dict[str, Any]) -> None:
    assert got["valid"] is True, got
    assert set(got["parsed"]) == {"city", "temperature_c", "sunny", "wind", "tags"}, got


CHECKS = {
    "stream": _check_stream,
    "tools": _check_tools,
    "structured": _check_structured,
    "structured_json_schema": _check_structured,
}


@pytest.mark.parametrize("dialect", [target["label"] for target in TARGETS])
@pytest.mark.parametrize("client", list(CLIENTS))
def test_client_streams_round_trips_a_tool_and_validates_structured_output(client_results, client, dialect):
    if shutil.which("node") is None and CLIENTS[client][0] == "node":
        pytest.skip("node is not installed")
    cases = client_results[client][dialect]
    failures = {name: got["error"] for name, got in cases.items() if "error" in got}
    assert not failures, "\n\n".join(f"{name}:\n{error}" for name, error in failures.items())
    for name, got in cases.items():
        CHECKS[name](got)


def test_every_call_was_answered_by_the_pinned_offering(stack, client_key, client_results):
    """The provider preference held (so each dialect was the one under test) and nothing failed on the way."""
    answered = [
        (name, got)
        for per_client in client_results.values()
        for cases in per_client.values()
        for name, got in cases.items()
    ]
    calls = sum(1 + (name == "tools") for name, got in answered if "error" not in got)  # a round trip is two calls
    records = wait_until(
        lambda: (found := _generations(stack, client_key)) and len(found) >= calls and found,
        timeout=60,
        message=f"{calls} generation records of the matrix's key",
    )
    pinned = {target["model"]: target["provider"]["only"][0] for target in TARGETS}
    served = Counter((r["model"], r["provider"], r["status"]) for r in records)
    assert set(served) == {(model, provider, "ok") for model, provider in pinned.items()}, served


def _generations(stack, key: str) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    cursor: str | None = ""
    while cursor is not None:
        params: dict[str, str | int] = {"limit": 100, **({"cursor": cursor} if cursor else {})}
        response = requests.get(
            f"{stack.base_url}/api/v1/generations",
            params=params,
            headers={"Authorization": f"Bearer {key}"},
            timeout=10,
        )
        response.raise_for_status()
        page = response.json()
        records += [record for record in page["data"] if record.get("ingested")]
        cursor = page["next_cursor"] if page["has_more"] else None
    return records
