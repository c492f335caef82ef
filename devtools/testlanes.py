"""``make test``: the whole suite in parallel lanes, each a pytest of its own with its own throw-away servers.

``python -m devtools.testlanes [--coverage term|html] [--durations N] [--one-lane] -- PYTEST_ARGS``

Why lanes and not pytest-xdist workers: the tests of one run share its data Redis (each test flushes it),
its pub/sub channels (catalog and key publishing notify every listener whatever the database number) and
its Celery broker, so two xdist workers on one run's servers would empty and notify each other. A lane is
``python -m devtools.devstack test -- pytest ...``: its own Redis, its own test database (named after its
pid) and its own simulator and gateway, so lanes share nothing but the embedded PostgreSQL server.

The first lanes take the listed folders; the last one takes every other test (new folders included),
so a test added anywhere runs without naming it here. Each lane writes ``artifacts/test-<lane>.log``
and its coverage to ``.coverage.<lane>``; at the end the lanes' logs are printed, their coverage is
combined and checked against the floor in pyproject.toml, and the slowest tests of all lanes are listed.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"
# The as-deployed and chaos suites share one `make run` tree (tests/conftest.py, ``shared_stack``) and much of
# their time is waiting on it, so their lane also takes the browser tests, the platform apps, evaluation, the
# simulator and the contracts; the other lane takes the rest (the gateway, metering, the frontend's server side
# and every new folder). Balanced on the durations of .ci/run (artifacts/junit-<lane>.xml). Three lanes of the
# suite were tried again after the per-test reset got cheaper: on two cores, beside types and the second runs,
# reasoning-speed and hold-bound tests failed on the load, and no run was faster.
# The recovery suite (tests/recovery) has a lane and a `make run` tree of its own: it runs faults of four
# minutes in real time (~9 minutes in all) and spends them waiting, with 3 requests a second of load.
LANES: dict[str, tuple[str, ...]] = {
    "stacks": (
        "tests/deployed",
        "tests/reliability",
        "tests/platform",
        "tests/evaluation",
        "tests/contracts",
        "tests/sim",
        "tests/frontend/e2e",
    ),
    "recovery": ("tests/recovery",),
}
REST = "rest"
DURATION_LINE = re.compile(r"^(\d+\.\d+)s (setup|call|teardown)\s+(\S.*)$")
PROGRESS = re.compile(rb"\[\s*(\d+)%\]")
NOTHING_SELECTED = 5  # pytest's exit status when no test was collected or selected
HEARTBEAT_S = 60  # a line now and then while the lanes run: their logs are printed when each ends


@dataclass
class Lane:
    name: str
    argv: list[str]
    log: Path
    process: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    elapsed: float = 0.0
    cpu: float = 0.0  # of the lane's processes that were waited for: pytest, Redis, `make run` (not PostgreSQL)
    code: int | None = None
    durations: list[tuple[float, str]] = field(default_factory=list)


def lane_paths(one_lane: bool) -> dict[str, list[str]]:
    """Each lane's pytest arguments selecting its tests: folders, or the rest through ``--ignore``."""
    if one_lane:
        return {REST: []}
    lanes = {name: list(paths) for name, paths in LANES.items()}
    lanes[REST] = ["tests", *(f"--ignore={path}" for paths in LANES.values() for path in paths)]
    return lanes


def pytest_argv(name: str, selection: list[str], *, coverage: bool, durations: int, extra: list[str]) -> list[str]:
    """The lane's command; every test's time also goes to artifacts/junit-<lane>.xml, to balance the lanes on."""
    cov = ["--cov", "--cov-report=", "--cov-fail-under=0"] if coverage else []  # the floor: on the combined data
    junit = f"--junitxml={ARTIFACTS / f'junit-{name}.xml'}"
    return [sys.executable, "-m", "devtools.devstack", "test", "--", sys.executable, "-m", "pytest",
            *cov, f"--durations={durations}", junit, *extra, *selection]  # fmt: skip


def start(lane: Lane, *, coverage: bool) -> None:
    env = {**os.environ, "COVERAGE_FILE": str(ROOT / f".coverage.{lane.name}")} if coverage else dict(os.environ)
    print(f"== lane {lane.name}: {' '.join(lane.argv[5:])} (log: {lane.log.relative_to(ROOT)}) ==", flush=True)
    with lane.log.open("wb") as out:
        lane.process = subprocess.Popen(lane.argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    lane.started = time.monotonic()


def progress(lane: Lane) -> str:
    found = PROGRESS.findall(lane.log.read_bytes()[-4000:])
    return f"{lane.name} {int(found[-1]) if found else 0}%"


def wait_all(lanes: list[Lane]) -> None:
    """Print each lane's log as it finishes, in the order they finish."""
    running = list(lanes)
    beat = time.monotonic()
    while running:
        if time.monotonic() - beat > HEARTBEAT_S:
            beat = time.monotonic()
            print(f"lanes running: {', '.join(map(progress, running))}", flush=True)
        for lane in list(running):
            assert lane.process is not None
            pid, status, usage = os.wait4(lane.process.pid, os.WNOHANG)  # poll(), with the lane's CPU time
            if pid == 0:
                continue
            lane.code = lane.process.returncode = os.waitstatus_to_exitcode(status)
            lane.elapsed, lane.cpu = time.monotonic() - lane.started, usage.ru_utime + usage.ru_stime
            if lane.code == NOTHING_SELECTED and len(lanes) > 1:  # `-k`/`-m` left this lane nothing: not a failure
                lane.code = 0
            running.remove(lane)
            text = lane.log.read_text(errors="replace")
            lane.durations = [
                (float(m[1]), f"{m[2]:<8} {m[3]}") for m in map(DURATION_LINE.match, text.splitlines()) if m
            ]
            print(
                f"\n== lane {lane.name}: exit {lane.code} after {lane.elapsed:.0f}s ({lane.cpu:.0f}s CPU) ==\n{text}",
                flush=True,
            )
        time.sleep(0.5)


def combine_coverage(lanes: list[Lane], report: str) -> int:
    data = [str(path) for lane in lanes if (path := ROOT / f".coverage.{lane.name}").exists()]
    coverage = [sys.executable, "-m", "coverage"]
    subprocess.run([*coverage, "combine", "--quiet", *data], cwd=ROOT, check=True)
    print("\n== coverage of all lanes (floor: pyproject.toml [tool.coverage.report] fail_under) ==", flush=True)
    if report == "html":
        subprocess.run([*coverage, "html", "--quiet"], cwd=ROOT, check=False)
        print("htmlcov/index.html written", flush=True)
    return subprocess.run([*coverage, "report"], cwd=ROOT, check=False).returncode


def print_slowest(lanes: list[Lane], count: int) -> None:
    rows = sorted(((seconds, lane.name, what) for lane in lanes for seconds, what in lane.durations), reverse=True)
    print(f"\n== slowest {count} of all lanes ==")
    for seconds, name, what in rows[:count]:
        print(f"{seconds:8.2f}s  {name:<6} {what}")
    for lane in lanes:
        print(f"lane {lane.name}: {lane.elapsed:.0f}s, {lane.cpu:.0f}s CPU, exit {lane.code}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.testlanes", description=__doc__.split("\n")[0])
    parser.add_argument("--coverage", choices=["", "term", "html"], default="term", help="'' for none")
    parser.add_argument("--durations", type=int, default=25)
    parser.add_argument("--one-lane", action="store_true", help="one pytest for everything (a part of the suite)")
    parser.add_argument("pytest_args", nargs="*")
    args = parser.parse_args(argv)
    ARTIFACTS.mkdir(exist_ok=True)
    coverage = bool(args.coverage)
    lanes = [
        Lane(
            name,
            pytest_argv(name, selection, coverage=coverage, durations=args.durations, extra=args.pytest_args),
            ARTIFACTS / f"test-{name}.log",
        )
        for name, selection in lane_paths(args.one_lane).items()
    ]
    try:
        for lane in lanes:
            start(lane, coverage=coverage)
        wait_all(lanes)
    except KeyboardInterrupt:  # the terminal's Ctrl-C reached every lane too: wait for them to stop
        for lane in lanes:
            if lane.process is not None:
                lane.process.wait()
        return 130
    failed = [lane.name for lane in lanes if lane.code]
    code = combine_coverage(lanes, args.coverage) if coverage else 0  # also after a failure: the figure is worth seeing
    print_slowest(lanes, args.durations)
    if failed:
        print(f"failed lanes: {', '.join(failed)} (logs printed above, and in artifacts/)", flush=True)
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
