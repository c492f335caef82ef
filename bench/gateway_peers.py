"""The gateways under test: Tokenway, the pass-through, LiteLLM and Portkey; installed on first use, started pinned."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil

from bench.gateway_load import Target, pinned, process, wait_port
from bench.gateway_upstreams import GATEWAY_CORE, LOAD_CORE, MODEL, ROOT, TOOLS
from devtools.ports import free_port

# --- targets ----------------------------------------------------------------------------------


def setup_tokenway_redis(mock_port: int) -> tuple[str, str]:
    """Publish a one-offering catalog and a bench key as the platform would; returns (key, redis url)."""
    import redis

    from contracts import redis_keys as rk
    from contracts.apikey_format import generate_key, hash_key
    from contracts.env import DEV_PEPPER
    from contracts.keyrecord import KeyRecord
    from contracts.snapshot import CatalogSnapshot, OfferingSnapshot
    from contracts.usage import Prices

    url = os.environ["REDIS_URL"]
    client = redis.Redis.from_url(url)
    offering = OfferingSnapshot(
        offering_id=1,
        model=MODEL,
        provider="mock",
        upstream_model=MODEL,
        dialect="openai",
        base_url=f"http://127.0.0.1:{mock_port}/v1",
        usage_dialect="openai",
        cached_tokens_in_input=True,
        prices=Prices(input=150_000, output=600_000, cache_read=75_000),
        context_window=128_000,
        max_output=4096,
        parameters=("tools", "json_mode"),
    )
    client.set(
        rk.CATALOG_SNAPSHOT, CatalogSnapshot(version=1, generated_at=time.time(), offerings=(offering,)).to_json()
    )
    client.incr(rk.CATALOG_VERSION)
    key = generate_key()
    pepper = os.environ.get("TOKENWAY_KEY_PEPPER", DEV_PEPPER)
    record = KeyRecord(key_id=1, tenant_id=1, tenant_slug="bench", name="bench", prefix=key[:12])
    client.set(rk.key_record(hash_key(key, pepper)), record.to_json())
    client.set(rk.tenant_available(1), 10**15)
    client.delete(rk.USAGE_STREAM)
    client.close()
    return key, url


def pin_redis(url: str) -> None:
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    for proc in psutil.process_iter(["name", "cmdline"]):
        with contextlib.suppress(psutil.Error):
            if "redis-server" in (proc.info["name"] or "") and any(
                str(port) in part for part in proc.info["cmdline"] or ()
            ):
                proc.cpu_affinity([int(LOAD_CORE)])


def start_target(name: str, mock_port: int, stack: contextlib.ExitStack, workdir: Path) -> Target:
    port = free_port()
    starters: dict[str, Callable[[], Target]] = {
        "direct": lambda: Target("direct", f"http://127.0.0.1:{mock_port}/v1/chat/completions"),
        "tokenway": lambda: _tokenway(port, mock_port, stack, workdir, "uvicorn"),
        "tokenway-granian": lambda: _tokenway(port, mock_port, stack, workdir, "granian"),
        "python-passthrough": lambda: _passthrough(port, mock_port, stack, workdir),
        "litellm": lambda: _litellm(port, mock_port, stack, workdir),
        "portkey": lambda: _portkey(port, mock_port, stack, workdir),
    }
    return starters[name]()


def _started(target: Target, proc: subprocess.Popen[bytes], port: int, timeout: float, log: Path) -> Target:
    target.pid = proc.pid
    if not wait_port(port, timeout):
        tail = log.read_text(errors="replace")[-400:] if log.exists() else ""
        target.error = (
            f"did not listen within {timeout:.0f}s: {tail.strip().splitlines()[-1] if tail.strip() else 'no output'}"
        )
    return target


def _tokenway(port: int, mock_port: int, stack: contextlib.ExitStack, workdir: Path, server: str) -> Target:
    key, url = setup_tokenway_redis(mock_port)
    pin_redis(url)
    env = {**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'platform'}", "REDIS_URL": url}
    log = workdir / f"tokenway-{server}.log"
    proc = stack.enter_context(
        process(
            pinned(GATEWAY_CORE, [sys.executable, "-m", "routing", "--port", str(port), "--server", server]),
            env=env,
            log=log,
        )
    )
    name = "tokenway" if server == "uvicorn" else f"tokenway-{server}"
    target = Target(name, f"http://127.0.0.1:{port}/v1/chat/completions", {"authorization": f"Bearer {key}"})
    return _started(target, proc, port, 20, log)


def _passthrough(port: int, mock_port: int, stack: contextlib.ExitStack, workdir: Path) -> Target:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PASSTHROUGH_UPSTREAM": f"http://127.0.0.1:{mock_port}/v1"}
    granian = [sys.executable, "-m", "granian", "--interface", "asgi", "--loop", "uvloop", "--host", "127.0.0.1",
               "--port", str(port), "--workers", "1", "--no-access-log", "bench.gateway_upstreams:passthrough_app"]  # fmt: skip
    log = workdir / "passthrough.log"
    proc = stack.enter_context(process(pinned(GATEWAY_CORE, granian), env=env, log=log))
    return _started(Target("python-passthrough", f"http://127.0.0.1:{port}/v1/chat/completions"), proc, port, 20, log)


def _litellm(port: int, mock_port: int, stack: contextlib.ExitStack, workdir: Path) -> Target:
    binary = TOOLS / "litellm-venv" / "bin" / "litellm"
    target = Target("litellm", f"http://127.0.0.1:{port}/v1/chat/completions", {"authorization": "Bearer sk-bench"})
    target.error = ensure_litellm()
    if target.error:
        return target
    config = workdir / "litellm.yaml"
    config.write_text(
        f"model_list:\n  - model_name: {MODEL}\n    litellm_params:\n      model: openai/{MODEL}\n"
        f"      api_base: http://127.0.0.1:{mock_port}/v1\n      api_key: sk-mock\n"
        "litellm_settings:\n  telemetry: false\n  drop_params: true\n"
        "general_settings:\n  master_key: sk-bench\n"
    )
    env = {**os.environ, "LITELLM_LOG": "ERROR", "LITELLM_TELEMETRY": "False", "DISABLE_SCHEMA_UPDATE": "true"}
    env.pop("DATABASE_URL", None)
    log = workdir / "litellm.log"
    command = pinned(
        GATEWAY_CORE,
        [str(binary), "--config", str(config), "--port", str(port), "--host", "127.0.0.1", "--num_workers", "1"],
    )
    proc = stack.enter_context(process(command, env=env, log=log))
    return _started(target, proc, port, 120, log)


def _portkey(port: int, mock_port: int, stack: contextlib.ExitStack, workdir: Path) -> Target:
    script = TOOLS / "portkey" / "node_modules" / "@portkey-ai" / "gateway" / "build" / "start-server.js"
    headers = {
        "authorization": "Bearer sk-mock",
        "x-portkey-provider": "openai",
        "x-portkey-custom-host": f"http://127.0.0.1:{mock_port}/v1",
    }
    target = Target("portkey", f"http://127.0.0.1:{port}/v1/chat/completions", headers)
    target.error = ensure_portkey()
    if target.error:
        return target
    log = workdir / "portkey.log"
    proc = stack.enter_context(
        process(pinned(GATEWAY_CORE, ["node", str(script), f"--port={port}", "--headless"]), log=log)
    )
    return _started(target, proc, port, 30, log)


# --- installing the tools on first use (bounded; failures become "not available") ------------

PORTKEY_PACKAGE = {
    "name": "portkey-bench",
    "private": True,
    "dependencies": {"@portkey-ai/gateway": "1.15.2"},
    # 1.15.2 with newer hono / node-server answers every streaming request with 500.
    "overrides": {"hono": "4.9.7", "@hono/node-server": "1.13.5"},
}
LITELLM_SPEC = "litellm[proxy]==1.108.7"  # newest whose proxy extra installs from PyPI
INSTALL_TIMEOUT_S = 900


def _run_install(command: list[str], cwd: Path, log: Path) -> str | None:
    try:
        with log.open("wb") as out:
            code = subprocess.call(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, timeout=INSTALL_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"install failed: {exc!r}"
    return None if code == 0 else f"install failed (exit {code}), see {log}"


def ensure_wrk() -> str | None:
    if shutil.which("wrk"):
        return None
    if os.geteuid() == 0 and shutil.which("apt-get"):
        TOOLS.mkdir(parents=True, exist_ok=True)
        install = ["apt-get", "install", "-y", "-q", "wrk"]
        if _run_install(install, ROOT, TOOLS / "wrk-install.log"):  # a new machine may have no package lists yet
            _run_install(["apt-get", "update", "-q"], ROOT, TOOLS / "apt-update.log")
            _run_install(install, ROOT, TOOLS / "wrk-install.log")
    return None if shutil.which("wrk") else "wrk is not installed and could not be installed (apt-get install wrk)"


def ensure_litellm() -> str | None:
    venv = TOOLS / "litellm-venv"
    if (venv / "bin" / "litellm").exists():
        return None
    python = shutil.which("python3.11") or sys.executable
    error = _run_install([python, "-m", "venv", str(venv)], TOOLS, TOOLS / "litellm-venv.log")
    return error or _run_install(
        [str(venv / "bin" / "pip"), "install", "-q", LITELLM_SPEC], TOOLS, TOOLS / "litellm-install.log"
    )


def ensure_portkey() -> str | None:
    folder = TOOLS / "portkey"
    if (folder / "node_modules" / "@portkey-ai" / "gateway" / "build" / "start-server.js").exists():
        return None
    if not shutil.which("npm"):
        return "npm is not installed"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text(json.dumps(PORTKEY_PACKAGE, indent=1))
    return _run_install(["npm", "install", "--no-audit", "--no-fund"], folder, TOOLS / "portkey-install.log")
