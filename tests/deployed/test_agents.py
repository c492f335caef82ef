"""The real agent CLIs (from npm, pinned, installed into tests/.tools) against the running stack:
Claude Code with its default model for three turns, Codex ``exec`` on the Responses API with a tool call."""

from __future__ import annotations

import os
import re
import subprocess

import pytest
import requests

from tests.deployed.conftest import ROOT
from tests.npm_tools import npm_cli

pytestmark = [pytest.mark.slow, pytest.mark.deployed, pytest.mark.timeout(600)]

MARKER = "tokenway-deployed-tool-ok"
# Before the README's provider block (top-level keys must precede its table): run unattended.
CODEX_UNATTENDED = 'approval_policy = "never"\nsandbox_mode = "danger-full-access"\n'


def _generations(stack, key: str) -> list[dict[str, object]]:
    response = requests.get(
        f"{stack.base_url}/api/v1/generations?limit=50", headers={"Authorization": f"Bearer {key}"}, timeout=10
    )
    assert response.status_code == 200, response.text
    return list(response.json()["data"])


@pytest.fixture
def own_key(stack) -> str:
    """A key of the demo tenant for this test alone, so its generations are only this client's."""
    result = stack.make("manage", "ARGS=create_api_key --tenant demo --name agent")
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_claude_code_three_turns_with_its_default_model(stack, own_key, tmp_path):
    claude = npm_cli("claude")
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    env = {**os.environ, "HOME": str(home), "ANTHROPIC_BASE_URL": stack.base_url, "ANTHROPIC_API_KEY": own_key,
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1"}  # fmt: skip
    for name in (
        "ANTHROPIC_MODEL",
        "ANTHROPIC_SMALL_FAST_MODEL",
        "ANTHROPIC_DEFAULT_HAIKU_MODEL",
        "ANTHROPIC_AUTH_TOKEN",
    ):
        env.pop(name, None)  # the CLI's own default model, as a user runs it
    turns = (
        ["-p", "Say hello in five words."],
        ["-p", "Now say goodbye.", "--continue"],
        ["-p", "And thank you.", "--continue"],
    )
    for args in turns:
        result = subprocess.run(
            [str(claude), *args, "--tools", ""],
            env=env,
            cwd=work,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
        assert result.stdout.strip()
    answered = [g for g in _generations(stack, own_key) if g.get("status") == "ok"]
    assert len(answered) >= 3


def _readme_codex_config(base_url: str, *, default_model: bool) -> str:
    [block] = re.findall(r"```toml\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL)
    assert 'wire_api = "responses"' in block
    config = block.replace("http://127.0.0.1:8000", base_url)
    if default_model:  # Codex's own default: a newer GPT id the catalog resolves by family
        config = "\n".join(line for line in config.splitlines() if not line.startswith("model ="))
    return CODEX_UNATTENDED + config


# How Codex 0.171.0 offers each model the shell (seen in the first request it sends): a model it has no
# metadata for (the README's gpt-5) gets ``exec_command`` as a function tool; its own
# default, gpt-6.2-sol, is in the catalog bundled in Codex with ``tool_mode: code_mode_only``: one custom tool
# ``exec`` whose input is JavaScript, with the shell inside it as ``tools.exec_command``. Codex never asks a
# provider keyed by ``env_key`` for ``/models``, so no gateway answer changes either choice.
SHELL_CALLS = {
    False: 'Call the tool exec_command with {{"cmd": "touch {marker}"}}',
    True: 'Call the tool exec with {{"input": "await tools.exec_command({{cmd: \'touch {marker}\'}})"}}',
}


@pytest.mark.parametrize("default_model", [False, True], ids=["readme-config", "codex-default-model"])
def test_codex_exec_with_a_tool_call_on_the_responses_api(stack, own_key, tmp_path, default_model):
    codex = npm_cli("codex")
    home, work = tmp_path / "codex-home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    (home / "config.toml").write_text(_readme_codex_config(stack.base_url, default_model=default_model))
    env = {**os.environ, "CODEX_HOME": str(home), "HOME": str(tmp_path), "TOKENWAY_API_KEY": own_key,
           "NO_COLOR": "1", "RUST_LOG": "error"}  # fmt: skip
    env.pop("OPENAI_API_KEY", None)
    # The simulated model calls the tool a prompt names (sim/directed.py) with the arguments it gives.
    prompt = SHELL_CALLS[default_model].format(marker=MARKER)
    command = [str(codex), "exec", "--skip-git-repo-check", "--sandbox", "danger-full-access", prompt]
    result = subprocess.run(
        command, env=env, cwd=work, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=240
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert result.stdout.strip()
    assert (work / MARKER).is_file(), result.stderr[-3000:]  # the command ran: the file it made is there
    answered = [g for g in _generations(stack, own_key) if g.get("status") == "ok"]
    assert len(answered) >= 2  # the tool call, then the answer after the tool's output
