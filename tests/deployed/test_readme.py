"""Every command the README names, run the way the README says, against the running stack."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import pytest
import requests

from devtools.ports import free_port, wait_for_port
from tests.deployed.conftest import ROOT, curl_from_banner
from tests.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.deployed, pytest.mark.timeout(600)]
README = (ROOT / "README.md").read_text()


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README, re.DOTALL)


def test_the_banner_curl_works_as_printed(stack):
    result = subprocess.run(
        ["bash", "-c", curl_from_banner(stack.banner()) + " --fail -sS"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert '"choices"' in result.stdout


def test_healthz_reports_every_component_and_the_supervised_processes(stack):
    body = requests.get(f"{stack.base_url}/healthz", timeout=10).json()
    components = body["components"]
    assert body["status"] == "ok"
    assert {c: components[c]["status"] for c in ("database", "redis", "queues", "sim", "processes")} == dict.fromkeys(
        ("database", "redis", "queues", "sim", "processes"), "ok"
    )
    names = {row["name"] for row in components["processes"]["processes"]}
    assert {"web", "metering", "worker", "beat", "sim", "localstripe", "stripe-meter"} <= names


def _management_commands() -> list[str]:
    """The README's shell lines that run management commands (comments dropped)."""
    blocks = re.findall(r"```bash\n(.*?)```", README, re.DOTALL)
    lines = [line.split("  #")[0].strip() for block in blocks for line in block.splitlines()]
    return [line for line in lines if "make manage" in line or "manage.py" in line]


def test_the_readme_shows_management_commands():
    commands = _management_commands()
    assert any(c.startswith("make manage") for c in commands) and any("create_api_key" in c for c in commands)


@pytest.mark.parametrize("command", _management_commands())
def test_readme_management_command_runs_as_written(stack, command):
    result = subprocess.run(
        ["bash", "-c", command], cwd=ROOT, env=stack.env, capture_output=True, text=True, timeout=180
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    if "create_api_key" in command:
        key = result.stdout.strip()
        assert re.fullmatch(r"tw_\w+", key), result.stdout  # prints only the key
        response = requests.get(f"{stack.base_url}/api/v1/key", headers={"Authorization": f"Bearer {key}"}, timeout=10)
        assert response.status_code == 200, response.text


def test_devstack_exec_runs_a_command_against_the_running_stack(stack):
    code = "import os; print(os.environ['DATABASE_URL']); print(os.environ['REDIS_URL'])"
    result = subprocess.run(
        [sys.executable, "-m", "devtools.devstack", "exec", "--", sys.executable, "-c", code],
        cwd=ROOT,
        env={**stack.env, "PYTHONPATH": f"{ROOT}:{ROOT / 'platform'}"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert str(stack.data_dir) in result.stdout  # the embedded PostgreSQL's socket lives under the data dir


def test_the_readme_python_snippet_runs_as_written(stack):
    [snippet] = [block for block in _python_blocks() if "OpenAI(" in block]
    runnable = snippet.replace("http://127.0.0.1:8000", stack.base_url).replace(
        '".data/demo-api-key"', repr(str(stack.data_dir / "demo-api-key"))
    )
    result = subprocess.run([sys.executable, "-c", runnable], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]


def _readme_command(pattern: str) -> str:
    match = re.search(pattern, README)
    assert match, f"README no longer shows {pattern!r}"
    return match.group(1)


@contextmanager
def _background(command: str, env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(
        ["bash", "-c", command],
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield process
    finally:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


def test_the_readme_standalone_gateway_serves_next_to_the_running_stack(stack):
    command = _readme_command(
        r"`(PYTHONPATH=\S+ \.venv/bin/python -m devtools\.devstack exec -- .+ -m routing --port 8001)`"
    )
    port = free_port()
    with _background(command.replace("8001", str(port)), stack.env):
        wait_for_port(port, timeout=60)
        response = requests.get(
            f"http://127.0.0.1:{port}/v1/models", headers={"Authorization": f"Bearer {stack.key}"}, timeout=10
        )
    assert response.status_code == 200, response.text
    assert "deepseek-v3.2" in response.text


def test_the_readme_region_worker_joins_the_running_stack(stack):
    command = _readme_command(r"`(TOKENWAY_REGION=<name> PYTHONPATH=\S+ \.venv/bin/celery .+probes\.<name>)`")
    with _background(command.replace("<name>", "testregion"), stack.env) as worker:

        def joined() -> bool:
            workers = requests.get(f"{stack.base_url}/healthz", timeout=10).json()["components"]["queues"]["workers"]
            assert worker.poll() is None, "the region worker exited"
            return any(name.startswith("celery@") for name in workers)  # Celery's default node name

        wait_until(joined, timeout=60, message="the region worker never sent its heartbeat", interval=1)
