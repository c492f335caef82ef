"""``make run``: migrate, load demo data, start every process, supervise them, stop them in order.

Processes: the web app (Django + gateway, one ASGI app), the usage consumer, the
Celery worker (default, metering, stripe), beat, one probe worker per region, the
simulated provider fleet and, without ``STRIPE_API_KEY``, offline Stripe. Each runs in
a session of its own under the supervisor (restart with backoff, ``processes.json``).
The banner prints once everything answers. Ctrl-C / SIGTERM stops web first, then the
consumer and worker (drained), beat, probe workers, the simulator, offline Stripe; exit 0.
Expects DATABASE_URL and REDIS_URL (the devstack sets them).
"""

from __future__ import annotations

import contextlib
import dbm
import os
import pickle
import shelve
import subprocess
import sys
import time
from pathlib import Path

from contracts.env import env_int, env_list
from devtools.local_stripe import offline_stripe, register_webhook
from devtools.processes import StopRequest
from devtools.stack_ready import forget_heartbeats, not_ready, worker_names
from devtools.supervisor import Child, Supervisor
from routing.edge import PROTOCOL as EDGE_PROTOCOL

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
DATA = Path(os.environ.get("TOKENWAY_DATA_DIR") or ROOT / ".data").resolve()
READY_TIMEOUT_S = 180  # a cold start on two busy cores: migrations done, ~9 processes importing Django
REGIONS = env_list("TOKENWAY_REGIONS", ["beijing", "shanghai", "shenzhen", "chengdu"])


def _manage(*args: str) -> None:
    subprocess.run([PY, str(ROOT / "manage.py"), *args], check=True, cwd=ROOT)


def _celery_worker(name: str, queues: str, *extra: str) -> list[str]:
    return [PY, "-m", "celery", "-A", "tokenway.celery", "worker", "--without-gossip", "--without-mingle",
            "-l", "WARNING", "-Q", queues, "-n", f"{name}@%h", *extra]  # fmt: skip


def _children(*, port: int, sim_port: int, beat_schedule: Path) -> list[Child]:
    web = [PY, "-m", "uvicorn", "tokenway.asgi:application", "--host", "127.0.0.1", "--port", str(port),
           "--no-access-log", "--lifespan", "on", "--timeout-graceful-shutdown", "5", "--http", EDGE_PROTOCOL]  # fmt: skip
    beat = [PY, "-m", "celery", "-A", "tokenway.celery", "beat", "-l", "WARNING", "-s", str(beat_schedule)]
    children = [
        Child("sim", [PY, "-m", "sim", "--port", str(sim_port)], stage=4, stop_timeout=5),
        Child("web", web, stage=0, stop_timeout=10),
        # a fixed consumer name: after a restart it picks up its own pending entries
        Child("metering", [PY, str(ROOT / "manage.py"), "consume_usage", "--name", "devstack"], stage=1),
        Child("worker", _celery_worker("main", "default,metering,stripe", "-c", "2"), stage=1, stop_timeout=30),
        Child("beat", beat, stage=2, stop_timeout=5),
    ]
    for region in REGIONS:
        command = _celery_worker(f"probe-{region}", f"probes.{region}", "-c", "4", "-P", "threads")
        # A probe is a measurement (the next round repeats it): 10 s to finish, then it is cut short.
        env = {"TOKENWAY_REGION": region}
        children.append(Child(f"probe-{region}", command, stage=3, stop_timeout=10, env=env))
    return children


def _usable_beat_schedule(path: Path) -> None:
    """Beat killed mid-write leaves a schedule it cannot open; it only holds last-run times."""
    try:
        with shelve.open(str(path)):  # noqa: S301 - the schedule beat itself wrote; opened, not read
            return
    except (*dbm.error, OSError, EOFError, pickle.UnpicklingError, ValueError):
        for stale in path.parent.glob(f"{path.name}*"):
            stale.unlink(missing_ok=True)


def _prepare(stop: StopRequest) -> bool:
    for step in (
        ("migrate", "--noinput", "-v", "0"),
        ("load_catalog", str(ROOT / "demo" / "catalog.yaml")),
        ("seed_demo",),
        ("demo_credit", "--tenant", "demo"),
    ):
        if stop.requested:
            return False
        _manage(*step)
    return not stop.requested


def _wait_ready(supervisor: Supervisor, stop: StopRequest, *, port: int) -> list[str]:
    deadline, missing = time.monotonic() + READY_TIMEOUT_S, ["web"]
    names = worker_names(REGIONS)
    while not stop.requested and time.monotonic() < deadline:
        supervisor.tick()
        missing = not_ready(port=port, workers=names)
        if not missing:
            return []
        time.sleep(0.5)
    return missing


def _banner(port: int, seconds: float) -> str:
    key = (DATA / "demo-api-key").read_text().strip()
    body = '{"model":"deepseek-v3.2","messages":[{"role":"user","content":"Hello"}]}'
    return (
        f"\nTokenway is running (ready in {seconds:.0f}s).\n"
        f"  console:     http://127.0.0.1:{port}/console/\n"
        f"  leaderboard: http://127.0.0.1:{port}/\n"
        f"  API docs:    http://127.0.0.1:{port}/api/docs/\n"
        f"  health:      http://127.0.0.1:{port}/healthz\n"
        "  demo login:  demo@tokenway.local / demo-password-123\n"
        "  try it:\n"
        f"    curl http://127.0.0.1:{port}/v1/chat/completions -H 'Authorization: Bearer {key}' "
        f"-H 'content-type: application/json' -d '{body}'\n"
        f'  (the key is also in {DATA / "demo-api-key"}; management commands: make manage ARGS="...";'
        " Ctrl-C stops everything)\n"
    )


def main() -> int:
    started, stop = time.monotonic(), StopRequest()
    port, sim_port = env_int("PORT", 8000), env_int("SIM_PORT", 8100)
    DATA.mkdir(parents=True, exist_ok=True)
    if not _prepare(stop):
        return 0
    supervisor = Supervisor(table=DATA / "processes.json", cwd=ROOT)
    try:
        stripe_env: dict[str, str] = {}
        if not os.environ.get("STRIPE_API_KEY"):
            stripe_env, stripe_children = offline_stripe(data_dir=DATA)
            os.environ.update(stripe_env)
            for child in stripe_children:
                supervisor.add(child)
            register_webhook(stripe_env, web_port=port)
        schedule = DATA / "celerybeat-schedule"
        _usable_beat_schedule(schedule)
        forget_heartbeats(os.environ["REDIS_URL"], worker_names(REGIONS))
        for child in _children(port=port, sim_port=sim_port, beat_schedule=schedule):
            supervisor.add(child)
        missing = _wait_ready(supervisor, stop, port=port)
        if missing and not stop.requested:
            print(f"Tokenway did not become ready in {READY_TIMEOUT_S}s: {', '.join(missing)}", file=sys.stderr)
            return 1
        if not stop.requested:
            print(_banner(port, time.monotonic() - started), flush=True)
        while not stop.requested:
            supervisor.tick()
            time.sleep(0.2)
        return 0
    finally:
        with contextlib.suppress(KeyboardInterrupt):
            supervisor.stop_all()


if __name__ == "__main__":
    sys.exit(main())
