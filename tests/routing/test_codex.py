"""The Codex CLI (the real one, from npm, pinned) through the gateway: ``codex exec`` with a custom
provider on the Responses API, a shell tool call run by Codex, and the final answer."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import orjson

from tests.npm_tools import npm_cli
from tests.routing.conftest import sim_requests

MODEL = "gpt-4.1-mini"  # one OpenAI-dialect offering: what Codex asks for is what the sim receives
MARKER = "tokenway-codex-ok"

CONFIG = """model = "{model}"
model_provider = "tokenway"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.tokenway]
name = "Tokenway"
base_url = "{base_url}/v1"
env_key = "TOKENWAY_API_KEY"
wire_api = "responses"
"""


def test_codex_exec_runs_a_tool_call_through_the_gateway(gateway, sim, tenant, tmp_path):
    codex = npm_cli("codex")
    home, work = tmp_path / "codex-home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    (home / "config.toml").write_text(CONFIG.format(model=MODEL, base_url=gateway.base_url))
    env = {**os.environ, "CODEX_HOME": str(home), "HOME": str(tmp_path), "TOKENWAY_API_KEY": tenant.key,
           "NO_COLOR": "1", "RUST_LOG": "error"}  # fmt: skip
    env.pop("OPENAI_API_KEY", None)
    # The sim calls the tool a prompt names (sim/directed.py); exec_command is Codex 0.171's shell tool.
    prompt = f'Call the tool exec_command with {{"cmd": "echo {MARKER}"}}'
    started = time.monotonic()
    result = _run(codex, [prompt], env, work)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert time.monotonic() - started < 180
    assert result.stdout.strip()  # the final answer, after the tool's output went back
    assert f"echo {MARKER}" in result.stderr  # Codex's transcript: the command it ran
    received = [r["json"] for r in reversed(sim_requests(sim, "openai", 5))]
    assert len(received) == 2
    first, last = received
    assert "exec_command" in [t["function"]["name"] for t in first["tools"]]
    [output] = [m for m in last["messages"] if m["role"] == "tool"]
    assert MARKER in output["content"]  # Codex ran the command and sent its output back
    assert orjson.dumps(last["messages"]).startswith(orjson.dumps(first["messages"])[:-1])
    events = tenant.wait_events(2)
    assert [(e["dialect_in"], e["status"]) for e in events] == [("responses", "ok")] * 2


def _run(codex: Path, args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [str(codex), "exec", "--skip-git-repo-check", "--sandbox", "danger-full-access", *args]
    return subprocess.run(
        command, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180
    )
