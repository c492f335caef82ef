"""The Codex CLI (the real one, from npm, pinned) through the gateway: ``codex exec`` with a custom
provider on the Responses API, a shell tool call run by Codex, and the final answer; with a catalog
model (the shell is the function tool ``exec_command``) and with Codex's own default model, for
which Codex's bundled metadata says code mode (the shell is ``tools.exec_command`` inside the
JavaScript a custom tool ``exec`` runs)."""

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

CONFIG = """{model}model_provider = "tokenway"
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
    (home / "config.toml").write_text(CONFIG.format(model=f'model = "{MODEL}"\n', base_url=gateway.base_url))
    env = _env(home, tmp_path, tenant.key)
    # The sim calls the tool a prompt names (sim/directed.py); exec_command is Codex 0.171's shell tool.
    prompt = f'Call the tool exec_command with {{"cmd": "echo {MARKER}"}}'
    started = time.monotonic()
    result = _run(codex, [prompt], env, work)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert time.monotonic() - started < 180
    assert result.stdout.strip()  # the final answer, after the tool's output went back
    received = [r["json"] for r in reversed(sim_requests(sim, "openai", 5))]
    assert len(received) == 2
    first, last = received
    assert "exec_command" in [t["function"]["name"] for t in first["tools"]]
    [output] = [m for m in last["messages"] if m["role"] == "tool"]
    assert MARKER in output["content"]  # Codex ran the command and sent its output back
    assert orjson.dumps(last["messages"]).startswith(orjson.dumps(first["messages"])[:-1])
    events = tenant.wait_events(2)
    assert [(e["dialect_in"], e["status"]) for e in events] == [("responses", "ok")] * 2


def _env(home: Path, tmp_path: Path, key: str) -> dict[str, str]:
    env = {**os.environ, "CODEX_HOME": str(home), "HOME": str(tmp_path), "TOKENWAY_API_KEY": key}
    env.update(NO_COLOR="1", RUST_LOG="error")
    env.pop("OPENAI_API_KEY", None)
    return env


def _run(codex: Path, args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [str(codex), "exec", "--skip-git-repo-check", "--sandbox", "danger-full-access", *args]
    return subprocess.run(
        command, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180
    )


def test_codex_default_model_runs_the_shell_from_code_mode(gateway, sim, tenant, tmp_path):
    """No model in the config: Codex asks for its default (gpt-6.2-sol, an alias of gpt-5 in the catalog)
    and offers it one custom tool, ``exec``, taking JavaScript that calls the shell as ``tools.exec_command``."""
    codex = npm_cli("codex")
    home, work = tmp_path / "codex-home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    (home / "config.toml").write_text(CONFIG.format(model="", base_url=gateway.base_url))
    env = _env(home, tmp_path, tenant.key)
    script = f"const r = await tools.exec_command({{cmd: 'touch {MARKER} && echo {MARKER}'}}); text(r.output)"
    result = _run(codex, [f"Call the tool exec with {orjson.dumps({'input': script}).decode()}"], env, work)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert (work / MARKER).is_file()  # the command ran, in the work dir
    events = tenant.wait_events(2)
    assert [(e["dialect_in"], e["model"], e["status"]) for e in events] == [("responses", "gpt-5", "ok")] * 2
    first, last = [r["json"] for r in reversed(sim_requests(sim, events[0]["provider"], 2))]
    assert [t["function"]["name"] for t in first["tools"]].count("exec") == 1
    [output] = [m for m in last["messages"] if m["role"] == "tool"]
    assert MARKER in output["content"]  # the script's output went back to the model
