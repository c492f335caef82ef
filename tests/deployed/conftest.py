"""The platform as deployed: the real ``make run`` process tree, on free ports, with a throw-away data dir.

One tree for the whole run (``shared_stack`` in tests/conftest.py): this suite walks it first, then the
chaos suite (tests/reliability) injects its faults into it; tests/conftest.py orders them so. Nothing
wraps the app: every test talks HTTP to what ``make run`` started, as a user would. Its simulated
providers run calm and fast (the chaos suite's needs: every 5xx is the platform's own, 5,000 fuzz cases
fit in a minute or two); ``make run`` itself is the user's. At the end the tree is stopped with SIGTERM
(to the process ``make run`` runs, as a supervisor or ``kill`` would) and must exit 0, with no traceback
in its output before the first fault.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
import requests

from devtools.ports import free_port
from tests.waiting import poll_until

ROOT = Path(__file__).resolve().parents[2]
BANNER = "Tokenway is running"
START_TIMEOUT_S = 420  # `make install` on a cold machine, then migrations and ~12 processes
STOP_TIMEOUT_S = 120
DEMO_LOGIN = ("demo@tokenway.local", "demo-password-123")
STAFF_LOGIN = ("admin@tokenway.local", "admin-password-123")
# what the outer test run (or its `make`) set; the stack must find its own servers
OUTER_ENV = ("DATABASE_URL", "REDIS_URL", "TOKENWAY_ENV", "MAKEFLAGS", "MAKELEVEL", "MFLAGS", "STRIPE_API_KEY",
             "STRIPE_API_BASE", "STRIPE_METER_API_BASE", "STRIPE_WEBHOOK_SECRET", "DJANGO_SETTINGS_MODULE")  # fmt: skip


@dataclass
class Stack:
    process: subprocess.Popen[bytes]
    port: int
    sim_port: int
    data_dir: Path
    log: Path
    env: dict[str, str]
    started_s: float = 0.0
    # Where in the output the chaos suite's first fault is: tracebacks after it are expected.
    faults_from: int | None = None
    # What a fault suite restarted itself (a PostgreSQL it started again): stopped after the tree.
    after_stop: Callable[[Stack], None] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def key(self) -> str:
        return (self.data_dir / "demo-api-key").read_text().strip()

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def banner(self) -> str:
        text = self.output()
        return text[text.index(BANNER) :]

    def make(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """A Makefile target against this stack (its data dir), as the README shows it."""
        return subprocess.run(
            ["make", "--no-print-directory", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def login(self, email: str, password: str) -> requests.Session:
        session = requests.Session()
        session.get(f"{self.base_url}/accounts/login/", timeout=10).raise_for_status()
        form = {"username": email, "password": password, "csrfmiddlewaretoken": session.cookies["csrftoken"]}
        response = session.post(
            f"{self.base_url}/accounts/login/",
            data=form,
            timeout=10,
            headers={"Referer": f"{self.base_url}/accounts/login/"},
        )
        response.raise_for_status()
        assert "sessionid" in session.cookies, f"login as {email} failed"
        return session


def _stack_env(port: int, sim_port: int, data_dir: Path) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if name not in OUTER_ENV}
    env.update(
        PORT=str(port),
        SIM_PORT=str(sim_port),
        TOKENWAY_DATA_DIR=str(data_dir),
        STRIPE_PORT=str(free_port()),
        STRIPE_METER_PORT=str(free_port()),
    )
    return env


def _wait_for_banner(stack: Stack) -> None:
    poll_until(
        lambda: BANNER in stack.output() or stack.process.poll() is not None, timeout=START_TIMEOUT_S, interval=0.25
    )
    if stack.process.poll() is not None:
        pytest.fail(f"make run exited with {stack.process.returncode}:\n{stack.output()[-4000:]}")
    if BANNER not in stack.output():
        pytest.fail(f"no banner within {START_TIMEOUT_S}s:\n{stack.output()[-4000:]}")


def _stop(stack: Stack) -> tuple[int, float]:
    """SIGTERM to what `make run` runs (the devstack); make then exits with its status."""
    started = time.monotonic()
    for child in psutil.Process(stack.process.pid).children():
        child.send_signal(signal.SIGTERM)
    try:
        code = stack.process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(stack.process.pid, signal.SIGKILL)
        pytest.fail(f"make run did not stop within {STOP_TIMEOUT_S}s:\n{stack.output()[-4000:]}")
    return code, time.monotonic() - started


def _leftovers(data_dir: Path) -> list[str]:
    found = []
    for process in psutil.process_iter(["pid", "cmdline"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if str(data_dir) in cmdline:
            found.append(f"{process.info['pid']}: {cmdline[:120]}")
    return found


@contextmanager
def running_stack(label: str = "deployed", *, extra_env: dict[str, str] | None = None) -> Iterator[Stack]:
    """``make run`` on free ports with a throw-away data dir; stopped with SIGTERM and checked on the way out.

    A suite that breaks the stack on purpose (tests/reliability) sets ``faults_from``: a task failing
    while PostgreSQL is away logs its traceback and that is the expected outcome; and ``after_stop``,
    run before the check that nothing of the stack is left running.
    """
    # Not pytest's tmp_path: concurrent pytest runs reset its root to 0700, and the embedded
    # PostgreSQL runs as its own user, which must reach its data dir until it has stopped.
    scratch = Path(tempfile.mkdtemp(prefix=f"tokenway-{label}-"))
    data_dir = scratch / "data"
    port, sim_port = free_port(), free_port()
    log = scratch / "make-run.log"
    env = {**_stack_env(port, sim_port, data_dir), **(extra_env or {})}
    started = time.monotonic()
    with log.open("wb") as out:
        process = subprocess.Popen(
            ["make", "--no-print-directory", "run"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    stack = Stack(process=process, port=port, sim_port=sim_port, data_dir=data_dir, log=log, env=env)
    try:
        _wait_for_banner(stack)
        stack.started_s = time.monotonic() - started
        print(f"\n[{label}] make run: banner after {stack.started_s:.1f}s")
        yield stack
    finally:
        code, stop_s = _stop(stack)
        print(f"\n[{label}] make run: stopped in {stop_s:.1f}s, exit {code}")
        if stack.after_stop is not None:
            stack.after_stop(stack)
        output = stack.output()
        (ROOT / "artifacts").mkdir(exist_ok=True)
        (ROOT / "artifacts" / f"{label}-make-run.log").write_text(output)
        assert code == 0, f"make run exited {code} after SIGTERM:\n{output[-4000:]}"
        assert "Traceback" not in output[: stack.faults_from], (
            f"a traceback in make run's output before any fault: artifacts/{label}-make-run.log"
        )
        assert "everything stopped" in output
        assert not (data_dir / "stack.env").exists()
        assert not _leftovers(data_dir), _leftovers(data_dir)
        shutil.rmtree(scratch, ignore_errors=True)


SIM_TIME_SCALE = "0.002"  # a 700 ms TTFT takes 1.4 ms: the fuzzer's 5,000 cases fit in a minute or two
REGIONS = "beijing,shanghai"  # two probe workers are enough to kill one; fewer processes start faster


@contextmanager
def shared_running_stack(label: str = "stack", *, time_scale: str = SIM_TIME_SCALE) -> Iterator[Stack]:
    """The tree both suites share: simulated providers without their random faults and incidents (those
    are upstream failures, not ours: the chaos suite counts every 5xx as the platform's), faster than
    real time, two probe regions. The recovery suite (tests/recovery) starts one of its own in real
    time (``time_scale="1"``): what it measures is how many real seconds recovery takes."""
    from tests.routing.conftest import calm_profiles

    folder = Path(tempfile.mkdtemp(prefix=f"tokenway-{label}-sim-"))
    env = {"SIM_PROFILES": str(calm_profiles(folder)), "SIM_TIME_SCALE": time_scale, "TOKENWAY_REGIONS": REGIONS}
    try:
        with running_stack(label, extra_env=env) as stack:
            yield stack
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="package")
def stack(shared_stack: Stack) -> Stack:
    return shared_stack


@pytest.fixture(scope="package")
def demo_session(stack: Stack) -> requests.Session:
    return stack.login(*DEMO_LOGIN)


@pytest.fixture(scope="package")
def staff_session(stack: Stack) -> requests.Session:
    return stack.login(*STAFF_LOGIN)


def curl_from_banner(banner: str) -> str:
    match = re.search(r"^\s*(curl .+)$", banner, re.MULTILINE)
    assert match, banner
    return match.group(1)
