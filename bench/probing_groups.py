"""What counts as the probing system's CPU, read the same way from the benchmark's process tree
(``bench.probing_processes``) and from a running ``make run`` tree (``bench.probing_live``).

Counted, each whole process tree (threads, prefork children and PostgreSQL's per-connection backends
included, ``bench.process_cpu``): the probe workers (one per region, nothing else runs there), Celery
beat, the default worker (statistics refresh, dispatch, re-probes, leaderboard pre-render, and also
metering's and publishing's periodic tasks), PostgreSQL and Redis. The per-task CPU counters
(``foundation.task_metrics``) split the default worker: evaluation's tasks against the rest.
Not counted: the simulated providers (a real provider's CPU is not ours; shown apart), the web app,
the usage consumer and the offline Stripe fakes (they do no probing work).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import redis

from bench.process_cpu import Window
from foundation.task_metrics import TASK_CPU, TASK_OUTCOMES

PROBE_WORKERS, BEAT, WORKER, POSTGRES, REDIS, SIM = (
    "probe workers",
    "beat",
    "default worker",
    "PostgreSQL",
    "Redis",
    "simulated providers",
)
COUNTED = (PROBE_WORKERS, BEAT, WORKER, POSTGRES, REDIS)
# The default worker's tasks that belong to the probing system (the probe batches run on the probe workers).
PROBING_TASKS = ("evaluation.", "frontend.board_prerender")


NOTE = (
    "counted, each whole process tree from /proc (threads, prefork children, PostgreSQL's per-connection backends): "
    "the probe workers, beat, the default worker (evaluation's tasks and also metering's and publishing's periodic "
    "ones: its task bodies are split by the per-task CPU counters), PostgreSQL, Redis; not counted: the simulated "
    "providers (a real provider's CPU is not ours; shown apart), the web app, the usage consumer, the Stripe fakes"
)


def process_groups(table: Mapping[str, int]) -> dict[str, list[int]]:
    """Supervisor names (``devtools.runall``) -> the groups above."""
    return {
        PROBE_WORKERS: [pid for name, pid in table.items() if name.startswith("probe-")],
        BEAT: [table["beat"]],
        WORKER: [table["worker"]],
        SIM: [table["sim"]],
    }  # a group whose processes are absent (the baseline's probe workers) reads 0


@dataclass
class TaskCounters:
    """The Redis task counters (CPU seconds and runs per task), read at the start and end of a window."""

    cpu_s: dict[str, float] = field(default_factory=dict)
    runs: dict[str, int] = field(default_factory=dict)

    @classmethod
    def read(cls, client: redis.Redis) -> TaskCounters:
        cpu = {_text(k): float(v) for k, v in client.hgetall(TASK_CPU).items()}
        runs: dict[str, int] = {}
        for key, count in client.hgetall(TASK_OUTCOMES).items():
            name = _text(key).rpartition("|")[0]
            runs[name] = runs.get(name, 0) + int(count)
        return cls(cpu, runs)

    def minus(self, earlier: TaskCounters) -> TaskCounters:
        return TaskCounters(
            {k: v - earlier.cpu_s.get(k, 0.0) for k, v in self.cpu_s.items()},
            {k: v - earlier.runs.get(k, 0) for k, v in self.runs.items()},
        )


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def is_probing_task(name: str) -> bool:
    return name.startswith(PROBING_TASKS) and name != "evaluation.probe_batch"


@dataclass(frozen=True)
class Reading:
    """One window's figures: CPU seconds per group, per task, task runs."""

    label: str
    window: Window
    tasks: TaskCounters

    def counted_s(self) -> float:
        return sum(self.window.cpu_s.get(group, 0.0) for group in COUNTED)

    def worker_split(self) -> tuple[float, float]:
        """(probing tasks, other tasks) CPU seconds of the default worker's task bodies."""
        probing = sum(v for k, v in self.tasks.cpu_s.items() if is_probing_task(k))
        other = sum(v for k, v in self.tasks.cpu_s.items() if not k.startswith(PROBING_TASKS))
        return probing, other

    def as_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "seconds": self.window.seconds,
            "cpu_s": self.window.cpu_s,
            "task_cpu_s": self.tasks.cpu_s,
            "task_runs": self.tasks.runs,
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Reading:
        return cls(
            raw["label"], Window(raw["seconds"], dict(raw["cpu_s"])), TaskCounters(raw["task_cpu_s"], raw["task_runs"])
        )


def share(seconds: float, window: float) -> str:
    return f"{seconds / window:.2%}"


def table(readings: list[Reading]) -> list[str]:
    """Markdown: one column per reading, CPU as a share of one core."""
    head = "| part | " + " | ".join(r.label for r in readings) + " |"
    lines = [head, "|---|" + "---|" * len(readings)]

    def row(name: str, values: list[float], bold: bool = False) -> None:
        cells = [share(v, r.window.seconds) for v, r in zip(values, readings, strict=True)]
        if bold:
            name, cells = f"**{name}**", [f"**{c}**" for c in cells]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")

    for group in COUNTED:
        row(group, [r.window.cpu_s.get(group, 0.0) for r in readings])
        if group == WORKER:
            row("&nbsp;&nbsp;of which evaluation's task bodies", [r.worker_split()[0] for r in readings])
            row("&nbsp;&nbsp;of which other tasks' bodies", [r.worker_split()[1] for r in readings])
    row("probing system, counted", [r.counted_s() for r in readings], bold=True)
    row(f"{SIM} (not counted)", [r.window.cpu_s.get(SIM, 0.0) for r in readings])
    return [*lines, "", NOTE]


def task_table(reading: Reading) -> list[str]:
    """Every task's runs and the CPU of its bodies in the window, most CPU first."""
    seconds = reading.window.seconds
    lines = ["| task | runs | CPU s | share of one core |", "|---|---|---|---|"]
    for name, cpu in sorted(reading.tasks.cpu_s.items(), key=lambda item: -item[1]):
        runs = reading.tasks.runs.get(name, 0)
        if runs or cpu:
            lines.append(f"| {name} | {runs} | {cpu:.2f} | {share(cpu, seconds)} |")
    return lines
