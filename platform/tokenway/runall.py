"""``make run``: migrate, load demo data, start every process, stop them all on Ctrl-C.

Processes: the web app (Django + gateway, one ASGI app), the simulated provider
fleet, Celery workers (default, metering, stripe), one probe worker per region
and beat. Expects DATABASE_URL and REDIS_URL (the devstack sets them).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tokenway.env import env_int, env_list
from tokenway.local_stripe import start_offline_stripe

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable


def _manage(*args: str) -> None:
    subprocess.run([PY, str(ROOT / "manage.py"), *args], check=True, cwd=ROOT)


def _process_specs() -> list[tuple[str, list[str]]]:
    port = env_int("PORT", 8000)
    sim_port = env_int("SIM_PORT", 8100)
    regions = env_list("TOKENWAY_REGIONS", ["beijing", "shanghai", "shenzhen", "chengdu"])
    celery = [
        PY,
        "-m",
        "celery",
        "-A",
        "tokenway.celery",
        "worker",
        "--without-gossip",
        "--without-mingle",
        "-l",
        "WARNING",
    ]
    specs = [
        ("sim", [PY, "-m", "sim", "--port", str(sim_port)]),
        (
            "web",
            [
                PY,
                "-m",
                "uvicorn",
                "tokenway.asgi:application",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--no-access-log",
                "--lifespan",
                "on",
            ],
        ),
        ("metering", [PY, str(ROOT / "manage.py"), "consume_usage"]),
        ("worker", [*celery, "-Q", "default,metering,stripe", "-c", "2", "-n", "main@%h"]),
        (
            "beat",
            [
                PY,
                "-m",
                "celery",
                "-A",
                "tokenway.celery",
                "beat",
                "-l",
                "WARNING",
                "-s",
                str(ROOT / ".data" / "celerybeat-schedule"),
            ],
        ),
    ]
    for region in regions:
        specs.append(
            (
                f"probe-{region}",
                [*celery, "-Q", f"probes.{region}", "-c", "4", "-P", "threads", "-n", f"probe-{region}@%h"],
            )
        )
    return specs


def _start(specs: list[tuple[str, list[str]]]) -> list[tuple[str, subprocess.Popen[bytes]]]:
    started = []
    for name, command in specs:
        env = {**os.environ}
        if name.startswith("probe-"):
            env["TOKENWAY_REGION"] = name.removeprefix("probe-")
        started.append((name, subprocess.Popen(command, cwd=ROOT, env=env)))
    return started


def _stop(processes: list[tuple[str, subprocess.Popen[bytes]]]) -> None:
    for _, process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 10
    for _, process in processes:
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main() -> int:
    signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops everything as Ctrl-C does
    (ROOT / ".data").mkdir(exist_ok=True)
    _manage("migrate", "--noinput", "-v", "0")
    _manage("load_catalog", str(ROOT / "catalog" / "demo.yaml"))
    _manage("seed_demo")
    port = env_int("PORT", 8000)
    offline: list[tuple[str, subprocess.Popen[bytes]]] = []
    if not os.environ.get("STRIPE_API_KEY"):
        stripe_env, offline = start_offline_stripe(data_dir=ROOT / ".data", web_port=port)
        os.environ.update(stripe_env)
    processes = offline + _start(_process_specs())
    key = (ROOT / ".data" / "demo-api-key").read_text().strip()
    print(
        f"\nTokenway is running.\n  console:     http://127.0.0.1:{port}/console/\n"
        f"  leaderboard: http://127.0.0.1:{port}/\n  API docs:    http://127.0.0.1:{port}/api/docs/\n"
        f"  demo login:  demo@tokenway.local / demo-password-123\n"
        f"  try it:\n    curl http://127.0.0.1:{port}/v1/chat/completions -H 'Authorization: Bearer {key}' "
        f"-H 'content-type: application/json' "
        '-d \'{"model":"deepseek-v3.2","messages":[{"role":"user","content":"Hello"}]}\'\n'
        "  (the key is also in .data/demo-api-key; Ctrl-C stops everything)\n",
        flush=True,
    )
    try:
        while all(process.poll() is None for _, process in processes):
            time.sleep(0.5)
        dead = [name for name, process in processes if process.poll() is not None]
        print(f"process(es) exited: {', '.join(dead)}; stopping the rest", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        _stop(processes)


if __name__ == "__main__":
    sys.exit(main())
