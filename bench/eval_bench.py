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
import subprocess
import sys
import time
import urllib.request
from dataclasses import replace
from typing import Any

import orjson

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tokenway.settings")
import django

django.setup()

import psutil  # noqa: E402

from contracts.tokens import count_text_tokens  # noqa: E402
from devtools.ports import free_port as _free_port  # noqa: E402
from evaluation.changepoints import Baseline, detect  # noqa: E402
from evaluation.corpus import new_seed, story_prompt  # noqa: E402
from evaluation.probes.base import ProbeContext, measure  # noqa: E402
from evaluation.probes.http import new_session  # noqa: E402
from evaluation.probes.outcome import Outcome  # noqa: E402
from evaluation.probes.performance import OUTPUT_TOKENS, SYSTEM_PROMPT  # noqa: E402
from evaluation.rules.from_rows import evaluate_rows  # noqa: E402
from evaluation.runner import Job, run_jobs  # noqa: E402
from evaluation.stats.quantiles import mad, median  # noqa: E402
from evaluation.wire.base import ChatRequest  # noqa: E402
from sim.server import start_in_thread  # noqa: E402
from tests.catalogs import sim_offerings  # noqa: E402

# real = sim x 0.5: a 1k-input TTFT is >= 180 ms real and a stream >= 200 ms, so the fleet's
# ~1 ms timer granularity (uvloop) and loopback/event-loop overhead stay well under 1%.
FIDELITY_SCALE = 0.5
# Probes per offering. The sample median of a log-normal TTFT (sigma 0.25-0.4) has a relative
# standard error of 1.25 sigma / sqrt(n): 1.0-1.6% at 1000 (printed as the sampling band).
FIDELITY_SAMPLES = 1000
# Probes per offering between reads of /_sim/requests, which keeps SIM_LOG_KEPT per provider (two of the
# reasoning offerings share one provider).
FIDELITY_ROUND = 250
SIM_LOG_KEPT = 500
# Probe streams in flight over all offerings, shared in proportion to each offering's expected
# probe duration so that all finish together. More than this loads the probing event loop
# enough to delay first chunks by a few ms (measured: +3% TTFT at 144 in flight).
FIDELITY_IN_FLIGHT = 80
MEAN_OUTPUT_TOKENS = 92  # profiles' default output length, uniform 24..160
MEAN_REASONING_TOKENS = 60  # reasoning models' thoughts, uniform 30..89 tokens
FIDELITY_PLAIN = (
    ("openai", "gpt-4.1-mini"),
    ("anthropic", "claude-sonnet-4.5"),
    ("deepseek", "deepseek-v3.2"),
    ("volcengine", "doubao-seed-1.6"),
    ("zhipu", "glm-4.6"),
    ("moonshot", "kimi-k2"),
)
# Reasoning models: hidden reasoning (only counted in the usage: OpenAI, Gemini) and streamed
# reasoning (`reasoning_content`: DeepSeek, MiniMax, Volcengine).
FIDELITY_REASONING = (
    ("gemini", "gemini-2.5-flash"),
    ("openai", "gpt-5"),
    ("openai", "gpt-5-mini"),
    ("minimax", "minimax-m2"),
    ("deepseek", "deepseek-r1"),
    ("volcengine", "deepseek-r1"),
)
FIDELITY_SETS = {
    "plain": FIDELITY_PLAIN,
    "reasoning": FIDELITY_REASONING,
    "all": FIDELITY_PLAIN + FIDELITY_REASONING,
}
CLEAN_HOUR = 7  # an hour with no drift in any provider's profile


def _get(url: str) -> dict:
    with urllib.request.urlopen(url) as response:
        return orjson.loads(response.read())


def _post(url: str, body: dict) -> dict:
    request = urllib.request.Request(
        url, data=orjson.dumps(body), method="POST", headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request) as response:
        return orjson.loads(response.read())


async def _perf_samples(offering, count: int, concurrency: int):
    semaphore = asyncio.Semaphore(concurrency)
    async with new_session(total_timeout_s=120) as session:

        async def one():
            async with semaphore:
                ctx = ProbeContext(session=session, offering=offering, region="bench", seed=new_seed())
                prompt = story_prompt(ctx.rng("1k"), 1_000)
                request = ChatRequest(
                    system=(SYSTEM_PROMPT,), messages=({"role": "user", "content": prompt},), max_tokens=OUTPUT_TOKENS
                )
                return await measure(ctx, "performance", "1k", request)

        return await asyncio.gather(*(one() for _ in range(count)))


def _concurrency(profiles: list[dict], in_flight: int) -> list[int]:
    """Streams in flight per offering: proportional to its probe's duration, below its capacity."""
    durations = [
        p["expected"]["ttft_ms"] / 1000
        + (MEAN_OUTPUT_TOKENS + MEAN_REASONING_TOKENS * p["reasoning"]) / p["expected"]["tokens_per_s"]
        for p in profiles
    ]
    share = [in_flight * d / sum(durations) for d in durations]
    return [max(1, min(round(c), p["perf"]["capacity"])) for c, p in zip(share, profiles, strict=True)]


async def _fidelity_round(offerings: list, count: int, concurrency: list[int]):
    """One round of ``count`` probes for every offering, all offerings at once."""
    rounds = await asyncio.gather(*(_perf_samples(t, count, c) for t, c in zip(offerings, concurrency, strict=True)))
    return [[outcome for outcome, timed in results if timed is not None and outcome.ok] for results in rounds]


def _sim_timings(base_url: str, provider: str, offering_key: str) -> list[dict]:
    """The fleet's per-request draws (ground truth of this sample) from /_sim/requests."""
    entries = _get(f"{base_url}/_sim/requests?provider={provider}&limit={SIM_LOG_KEPT}")["requests"]
    sims = [entry.get("sim") or {} for entry in entries]
    return [sim["timing"] for sim in sims if sim.get("offering") == offering_key and "timing" in sim]


def _pct(value: float, truth: float) -> str:
    return f"{100 * (value / truth - 1):+.1f}%"


def _fidelity_row(key, profile: dict, outcomes: list, draws: list[dict], scale: float) -> str:
    """Measured medians vs the configured medians, the sampling band, and vs the fleet's own draws.

    TTFT is the time to the first token of any kind (reasoning included); the answer's first token
    is shown beside it (no truth of its own: it is TTFT + the reasoning's generation time)."""
    perf = profile["perf"]
    n = len(outcomes)
    ttft = median([o.ttft_ms / scale for o in outcomes])
    answer = median([o.answer_ttft_ms / scale for o in outcomes if o.answer_ttft_ms is not None])
    tps = median([o.tps * scale for o in outcomes if o.tps])
    uncached = median([o.input_tokens - o.cached_tokens for o in outcomes])
    ttft_conf = profile["expected"]["ttft_ms"] + perf["prefill_ms_per_1k"] * uncached / 1000
    tps_conf = profile["expected"]["tokens_per_s"]
    ttft_band = 196 * 1.2533 * perf["ttft_sigma"] / math.sqrt(n)  # 95% band of a sample median, in %
    tps_band = 196 * 1.2533 * 0.5 * perf["jitter"] / math.sqrt(n)
    ttft_drawn = median([d["ttft_ms"] for d in draws])
    tps_drawn = median([d["tokens_per_s"] for d in draws])
    reasoning = "-" if not profile["reasoning"] else ("streamed" if profile["reasoning_field"] else "hidden")
    return (
        f"| {key[0]}/{key[1]} | {reasoning} | {n} | {ttft_conf:.0f} | {ttft:.0f} | {_pct(ttft, ttft_conf)} "
        f"| ±{ttft_band:.1f}% | {_pct(ttft, ttft_drawn)} | {answer:.0f} | {tps_conf:.1f} | {tps:.1f} "
        f"| {_pct(tps, tps_conf)} | ±{tps_band:.1f}% | {_pct(tps, tps_drawn)} |"
    )


def fidelity(
    which: str = "all",
    samples: int = FIDELITY_SAMPLES,
    scale: float = FIDELITY_SCALE,
    in_flight: int = FIDELITY_IN_FLIGHT,
) -> None:
    keys = FIDELITY_SETS[which]
    print(f"\n## Fidelity: measured vs configured (sim time), 1k-input streaming probes ({which} offerings)")
    print(
        f"reproduce: PYTHONPATH=.:platform .venv/bin/python -m bench.eval_bench --only fidelity --offerings {which} --samples {samples} --scale {scale} --in-flight {in_flight}   (fleet in its own process)"
    )
    fleet, base_url = _spawn_fleet("--seed", "11", "--time-scale", str(scale))
    try:
        _post(f"{base_url}/_sim/clock", {"hour": CLEAN_HOUR})
        for provider, model in keys:  # speed probes, not rate-limit probes: lift RPM/TPM
            _post(f"{base_url}/_sim/limits", {"provider": provider, "model": model, "rpm": None, "tpm": None})
        profiles = _get(f"{base_url}/_sim/profiles")["providers"]
        chosen = [profiles[provider]["offerings"][model] for provider, model in keys]
        concurrency = _concurrency(chosen, in_flight)
        by_key = {(o.provider, o.model): o for o in sim_offerings(base_url)}
        probed = [by_key[key] for key in keys]
        outcomes: list[list] = [[] for _ in probed]
        draws: list[list[dict]] = [[] for _ in probed]
        per_round = min(samples, FIDELITY_ROUND)
        for _ in range(max(1, samples // per_round)):
            for index, ok in enumerate(asyncio.run(_fidelity_round(probed, per_round, concurrency))):
                outcomes[index] += ok
            for index, offering in enumerate(probed):  # the log keeps SIM_LOG_KEPT per provider: read every round
                draws[index] += _sim_timings(base_url, offering.provider, chosen[index]["key"])[-per_round:]
        print(
            "| offering | reasoning | n | TTFT ms configured | measured | err | 95% sampling band | err vs fleet draws "
            "| first answer token ms | tok/s configured | measured | err | 95% sampling band | err vs fleet draws |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for index, key in enumerate(keys):
            print(_fidelity_row(key, chosen[index], outcomes[index], draws[index], scale))
    finally:
        fleet.terminate()
        fleet.wait(10)


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
        _post(f"{handle.base_url}/_sim/clock", {"hour": CLEAN_HOUR})
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
            _post(
                f"{handle.base_url}/_sim/faults",
                {"provider": key[0], "model": key[1], "rate": 1.0, "duration_s": 900, **fault},
            )
            after = _series_probe(handle, offering, 8, step, scale)
            _get(f"{handle.base_url}/_sim/faults")
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
    import math

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
        profiles = _get(f"{handle.base_url}/_sim/profiles")["providers"]
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
    fleet, base_url = _spawn_fleet("--zero-latency")
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


def _spawn_fleet(*flags: str) -> tuple[subprocess.Popen, str]:
    """The fleet in its own process (its own core and GIL), as `python -m sim` runs it."""
    port = _free_port()
    fleet = subprocess.Popen(
        [sys.executable, "-m", "sim", "--port", str(port), *flags], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    base_url = f"http://127.0.0.1:{port}"
    _wait(f"{base_url}/_sim/health")
    return fleet, base_url


def _wait(url: str) -> None:
    for _ in range(100):
        try:
            _get(url)
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer")


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
