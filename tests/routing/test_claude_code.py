"""Claude Code (the real CLI, from npm) through the gateway: ``claude -p`` then ``--continue``,
served by an OpenAI-dialect provider (translation), with the billing block stripped and the
second turn's forwarded prompt extending the first's byte for byte."""

from __future__ import annotations

import os
import subprocess

import orjson
import pytest

from tests.npm_tools import npm_cli
from tests.routing.conftest import sim_requests


def test_claude_code_print_then_continue_through_the_gateway(gateway, sim, tenant, tmp_path):
    claude = npm_cli("claude")
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    model = "deepseek-v4-flash"
    env = {
        **os.environ, "HOME": str(home), "ANTHROPIC_BASE_URL": gateway.base_url, "ANTHROPIC_API_KEY": tenant.key,
        "ANTHROPIC_MODEL": model, "ANTHROPIC_SMALL_FAST_MODEL": model, "ANTHROPIC_DEFAULT_HAIKU_MODEL": model,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
    }  # fmt: skip
    for args in (["-p", "Say hello in five words."], ["-p", "Now say goodbye.", "--continue"]):
        result = subprocess.run(
            [str(claude), *args, "--tools", "", "--max-turns", "2"],
            env=env,
            cwd=work,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
        assert result.stdout.strip()
    received = sorted(
        sim_requests(sim, "deepseek", 10) + sim_requests(sim, "deepseek-anthropic", 10), key=lambda r: r["timestamp"]
    )
    assert len(received) >= 2
    assert all("x-anthropic-billing-header" not in r["body"] for r in received)
    first, last = received[0], received[-1]
    events = tenant.wait_events(2)
    if all(e["attempts"] == 1 for e in events):  # a random provider fault may legitimately fail over
        assert first["provider"] == last["provider"]  # cache affinity kept the conversation on one offering
        assert orjson.dumps(last["json"]["messages"]).startswith(orjson.dumps(first["json"]["messages"])[:-1])
    assert [e["status"] for e in events] == ["ok"] * len(events)
    assert all(e["dialect_in"] == "anthropic" for e in events)


MODEL_ENV = ("ANTHROPIC_MODEL", "ANTHROPIC_SMALL_FAST_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL",
             "ANTHROPIC_DEFAULT_SONNET_MODEL", "ANTHROPIC_DEFAULT_OPUS_MODEL", "CLAUDE_CODE_SUBAGENT_MODEL")  # fmt: skip
CLAUDE_MODELS = {"claude-opus-4.1", "claude-sonnet-4.5", "claude-haiku-4.5"}


@pytest.mark.parametrize(
    ("model_args", "expected"),
    [([], "claude-opus-4.1"), (["--model", "sonnet"], "claude-sonnet-4.5"), (["--model", "opus"], "claude-opus-4.1")],
    ids=["default", "sonnet", "opus"],
)
def test_claude_code_out_of_the_box_model_names_resolve(gateway, sim, tenant, tmp_path, model_args, expected):
    """No model variables, no family fallback: Claude Code sends its own full ids (its default is a newer
    opus id than the catalog knows; ``--model sonnet`` becomes e.g. ``claude-sonnet-5``), which the catalog
    lists as aliases, so its users are served out of the box."""
    claude = npm_cli("claude")
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in MODEL_ENV}
    env.update({
        "HOME": str(home), "ANTHROPIC_BASE_URL": gateway.base_url, "ANTHROPIC_API_KEY": tenant.key,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
    })  # fmt: skip
    result = subprocess.run(
        [str(claude), "-p", "Say hello in five words.", *model_args, "--tools", "", "--max-turns", "2"],
        env=env,
        cwd=work,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert result.stdout.strip()
    events = tenant.wait_events(1)
    assert [e["status"] for e in events] == ["ok"] * len(events)
    assert {e["model"] for e in events} <= CLAUDE_MODELS and expected in {e["model"] for e in events}
    asked = [r["json"]["model"] for r in sim_requests(sim, "anthropic", 10)]
    assert asked and set(asked) <= {
        "claude-opus-4-1-20250805",
        "claude-sonnet-4-5-20250929",
        "claude-haiku-4-5-20251001",
    }
