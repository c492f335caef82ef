"""Evaluation fidelity: measured vs configured TTFT and tokens/s, and vs the fleet's own per-request draws
(which separates measurement error from sampling error), reasoning models included. A section of
``bench.eval_bench``, which sets Django up before importing this module."""

from __future__ import annotations

import asyncio
import math

from bench.fleet_process import CLEAN_HOUR, get_json, post_json, spawn_fleet
from evaluation.corpus import new_seed, story_prompt
from evaluation.probes.base import ProbeContext, measure
from evaluation.probes.http import new_session
from evaluation.probes.performance import OUTPUT_TOKENS, SYSTEM_PROMPT
from evaluation.stats.quantiles import median
from evaluation.wire.base import ChatRequest
from tests.catalogs import sim_offerings

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
    entries = get_json(f"{base_url}/_sim/requests?provider={provider}&limit={SIM_LOG_KEPT}")["requests"]
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
    fleet, base_url = spawn_fleet("--seed", "11", "--time-scale", str(scale))
    try:
        post_json(f"{base_url}/_sim/clock", {"hour": CLEAN_HOUR})
        for provider, model in keys:  # speed probes, not rate-limit probes: lift RPM/TPM
            post_json(f"{base_url}/_sim/limits", {"provider": provider, "model": model, "rpm": None, "tpm": None})
        profiles = get_json(f"{base_url}/_sim/profiles")["providers"]
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
