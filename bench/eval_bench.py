"""Evaluation fidelity and scale against the simulated fleet.

    PYTHONPATH=.:platform .venv/bin/python -m devtools.devstack test -- .venv/bin/python -m bench.eval_bench
    PYTHONPATH=.:platform .venv/bin/python -m bench.eval_bench --only scale     # one section (~3.5 min for all)

Sections: fidelity (measured vs configured TTFT and tokens/s, and vs the fleet's own
per-request draws, which separates measurement error from sampling error), incidents (injected vs
detected, in simulated minutes), dishonesty (flags vs the fleet's dishonesty knobs),
scale (probes/minute, CPU, memory for 1,000 offerings x 4 regions every 5 minutes).
No database is needed: probes run through the real runner, statistics through the
same pure functions the aggregation uses.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import random
import time
import urllib.request
from dataclasses import replace
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tokenway.settings")
import django

django.setup()

import psutil  # noqa: E402

from bench.eval_fidelity import (  # noqa: E402
    FIDELITY_IN_FLIGHT,
    FIDELITY_SAMPLES,
    FIDELITY_SCALE,
    FIDELITY_SETS,
    fidelity,
)
from bench.fleet_process import CLEAN_HOUR, get_json, post_json, spawn_fleet  # noqa: E402
from contracts.tokens import count_text_tokens  # noqa: E402
from evaluation.changepoints import Baseline, detect  # noqa: E402
from evaluation.probes.outcome import Outcome  # noqa: E402
from evaluation.rules.from_rows import evaluate_rows  # noqa: E402
from evaluation.runner import Job, run_jobs  # noqa: E402
from evaluation.stats.quantiles import mad, median  # noqa: E402
from sim.server import start_in_thread  # noqa: E402
from tests.catalogs import sim_offerings  # noqa: E402


def _series_probe(handle, offering, rounds: int, sim_step_s: float, scale: float):
    out = []
    for _ in range(rounds):
        results = asyncio.run(
            run_jobs([Job(offering.offering_id, "performance")], {offering.offering_id: offering}, region="bench")
        )
        for outcome in results[0][1]:
            if outcome.variant == "1k":
                out.append(outcome)
        time.sleep(sim_step_s * scale)
    return out


def incidents() -> None:
    print(
        "\n## Incidents: injected vs detected (simulated minutes; one probe round per 75 sim-s = 4 regions every 5 min)"
    )
    print("reproduce: PYTHONPATH=.:platform .venv/bin/python bench/eval_bench.py --only incidents   (time scale 0.01)")
    scale, step = 0.01, 75.0
    handle = start_in_thread(seed=5, time_scale=scale)
    print("| offering | injected | metric | baseline | detected after (sim min) |")
    print("|---|---|---|---|---|")
    try:
        post_json(f"{handle.base_url}/_sim/clock", {"hour": CLEAN_HOUR})
        by_key = {(o.provider, o.model): o for o in sim_offerings(handle.base_url)}
        cases: list[tuple[tuple[str, str], dict[str, Any], str]] = [
            (("openai", "gpt-4.1-mini"), {"kind": "http_503"}, "availability"),
            (("volcengine", "doubao-seed-1.6"), {"kind": "stall_before_first_token", "stall_s": 3.0}, "ttft"),
            (("zhipu", "glm-4.6"), {"kind": "slow_drip"}, "tps"),
        ]
        for key, fault, metric in cases:
            offering = by_key[key]
            before = _series_probe(handle, offering, 24, step, scale)
            baseline = _baseline(metric, before)
            post_json(
                f"{handle.base_url}/_sim/faults",
                {"provider": key[0], "model": key[1], "rate": 1.0, "duration_s": 900, **fault},
            )
            after = _series_probe(handle, offering, 8, step, scale)
            get_json(f"{handle.base_url}/_sim/faults")
            urllib.request.urlopen(
                urllib.request.Request(f"{handle.base_url}/_sim/faults?provider={key[0]}", method="DELETE")
            )
            values = [_value(metric, o) for o in before[-8:] + after]
            alarm = detect(metric, [v for v in values if v is not None], baseline)
            found = "not detected" if alarm is None or alarm.index < 8 else f"{(alarm.index - 8 + 1) * step / 60:.2f}"
            print(f"| {key[0]}/{key[1]} | {fault['kind']} | {metric} | {_fmt(baseline, metric)} | {found} |")
    finally:
        handle.stop()


def _value(metric, outcome):
    if metric == "availability":
        return float(outcome.error_class in ("server_error", "timeout", "connect", "truncated"))
    if outcome.error_class:
        return None
    return outcome.ttft_ms if metric == "ttft" else outcome.tps


def _baseline(metric, outcomes) -> Baseline:

    values = [v for o in outcomes if (v := _value(metric, o)) is not None]
    if metric == "availability":
        return Baseline(0.0, 0.0, p0=sum(values) / len(values))
    if metric == "ttft":
        logs = [math.log(v) for v in values]
        return Baseline(median(logs), mad(logs))
    return Baseline(median(values), mad(values))


def _fmt(baseline: Baseline, metric: str) -> str:
    return f"p0={baseline.p0:.2f}" if metric == "availability" else f"mu={baseline.mu:.2f} sigma={baseline.sigma:.2f}"


def dishonesty() -> None:
    print("\n## Dishonest offerings: flags vs the fleet's dishonesty knobs (3 runs of cache/price/quality probes each)")
    print("reproduce: PYTHONPATH=.:platform .venv/bin/python bench/eval_bench.py --only dishonesty   (zero latency)")
    handle = start_in_thread(seed=3, time_scale=0.0)
    try:
        profiles = get_json(f"{handle.base_url}/_sim/profiles")["providers"]
        offerings = sim_offerings(handle.base_url)
        by_id = {o.offering_id: o for o in offerings}
        jobs = [Job(o.offering_id, kind) for o in offerings for kind in ("cache", "price", "quality") for _ in range(3)]
        rows: dict[int, list[Outcome]] = {}
        for job, outcomes in asyncio.run(run_jobs(jobs, by_id, region="bench")):
            rows.setdefault(job.offering_id, []).extend(outcomes)
        print("| offering | configured knobs | flags raised |")
        print("|---|---|---|")
        agree = total = 0
        for o in offerings:
            profile = profiles[o.provider]["offerings"][o.model]
            knobs = _knobs(profile)
            flags = set(evaluate_rows(rows.get(o.offering_id, []), o.prices).flags) - {"capability_mismatch"}
            total += 1
            agree += knobs == flags
            if knobs or flags:
                print(
                    f"| {o.provider}/{o.model} | {', '.join(sorted(knobs)) or '-'} | {', '.join(sorted(flags)) or '-'} |"
                )
        print(f"agreement: {agree}/{total} offerings (all others: no knobs, no flags)")
    finally:
        handle.stop()


def _knobs(profile: dict) -> set[str]:
    d = profile["dishonesty"]
    knobs = set()
    if d.get("token_overreport") and d["token_overreport"] > 1.0:
        knobs.add("token_overcount")
    if d.get("billed_price_factor") not in (None, 1.0) or d.get("billed_prices"):
        knobs.add("price_mismatch")
    if d.get("quantized"):
        knobs.add("degraded_quality")
    if profile["cache_policy"] == "raw_prefix" and not profile["keeps_billing_block"]:
        knobs.add("billing_block_breaks_cache")
    return knobs


def scale(offerings: int = 1000, regions: int = 4) -> None:
    print(
        f"\n## Scale: {offerings} offerings x {regions} regions, one 5-minute cycle of performance probes (2 streaming requests each)"
    )
    print(
        "reproduce: PYTHONPATH=.:platform .venv/bin/python bench/eval_bench.py --only scale   (fleet in its own process, zero latency)"
    )
    fleet, base_url = spawn_fleet("--zero-latency")
    try:
        base = sim_offerings(base_url)
        honest = [o for o in base if o.provider not in ("bargain-cloud",)]
        synthetic = {i: replace(honest[i % len(honest)], offering_id=i) for i in range(1, offerings + 1)}
        jobs = [Job(i, "performance") for i in synthetic for _ in range(regions)]
        random.Random(1).shuffle(jobs)
        process = psutil.Process()
        cpu0, wall0 = process.cpu_times(), time.perf_counter()
        rss = process.memory_info().rss
        done = 0
        batch = 400  # one worker task's worth at the dispatcher's batch size x 16 in flight
        for start in range(0, len(jobs), batch):
            results = asyncio.run(run_jobs(jobs[start : start + batch], synthetic, region="bench"))
            done += sum(1 for _, outs in results if outs and all(o.ok for o in outs))
            rss = max(rss, process.memory_info().rss)
        wall = time.perf_counter() - wall0
        cpu1 = process.cpu_times()
        cpu = (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)
        fleet_cpu = psutil.Process(fleet.pid).cpu_times()
        needed = offerings * regions / 5
        print(
            "| probes | ok | wall s | probes/min | needed probes/min | probe-side CPU s | CPU share of 1 core | peak RSS MiB | fleet CPU s |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        print(
            f"| {len(jobs)} | {done} | {wall:.1f} | {len(jobs) / wall * 60:.0f} | {needed:.0f} | {cpu:.1f} | {cpu / 300:.1%} per 5 min | {rss / 2**20:.0f} | {fleet_cpu.user + fleet_cpu.system:.1f} |"
        )
    finally:
        fleet.terminate()
        fleet.wait(10)


SECTIONS = {"fidelity": fidelity, "incidents": incidents, "dishonesty": dishonesty, "scale": scale}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", choices=list(SECTIONS), action="append")
    parser.add_argument("--offerings", choices=list(FIDELITY_SETS), default="all", help="fidelity: which offerings")
    parser.add_argument("--samples", type=int, default=FIDELITY_SAMPLES, help="fidelity: probes per offering")
    parser.add_argument("--scale", type=float, default=FIDELITY_SCALE, help="fidelity: real seconds per sim second")
    parser.add_argument("--in-flight", type=int, default=FIDELITY_IN_FLIGHT, help="fidelity: streams in flight")
    args = parser.parse_args()
    for name in args.only or list(SECTIONS):
        if name == "fidelity":
            fidelity(args.offerings, args.samples, args.scale, args.in_flight)
        else:
            SECTIONS[name]()


if __name__ == "__main__":
    _ = count_text_tokens  # shared token counter (kept for readers comparing with the fleet)
    main()
