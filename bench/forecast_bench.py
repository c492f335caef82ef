"""How wrong is the router's load forecast? Holt's linear smoothing (routing.limits.forecast) on
per-second request counts, scored against what came in the next 10 / 15 / 30 s, beside two naive
forecasts: "the last second repeats" and "the last minute's mean repeats".

Synthetic traffic with a fixed seed (the forecast itself is the real code; the traffic is not a
replay of production): steady Poisson, a ramp, periodic bursts, and on/off agent sessions.

    .venv/bin/python -m bench.forecast_bench [--seconds 900] [--seed 11]
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable

from routing.limits.forecast import ALPHA, BETA, forecast_error

HORIZONS = (10, 15, 30)
Rate = Callable[[int], float]


def poisson(rng: random.Random, rate: float) -> int:
    count, total = 0, rng.expovariate(rate) if rate > 0 else 2.0
    while total < 1:
        count, total = count + 1, total + rng.expovariate(rate)
    return count


SHAPES: dict[str, Callable[[int, int], float]] = {
    "steady 5/s": lambda t, n: 5.0,
    "ramp 1→12/s": lambda t, n: 1 + 11 * t / n,
    "bursts +15/s for 30 s every 2 min": lambda t, n: 3 + (15 if t % 120 < 30 else 0),
    "agent sessions 8/s on 20 s, 0.5/s off 40 s": lambda t, n: 8 if t % 60 < 20 else 0.5,
}


def mean_window_mae(counts: list[int], horizon: int, warmup: int = 30) -> float:
    errors = []
    for t in range(warmup, len(counts) - horizon):
        recent = counts[max(0, t - 59) : t + 1]
        errors.append(abs(sum(recent) / len(recent) * horizon - sum(counts[t + 1 : t + 1 + horizon])))
    return sum(errors) / len(errors)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=900)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args(argv)
    print(f"Load forecast error (Holt α={ALPHA}, β={BETA}; {args.seconds} s per shape, seed {args.seed})\n")
    print("| traffic | horizon | mean load (req) | Holt MAE | Holt error | last-second MAE | last-minute MAE |")
    print("|---|---|---|---|---|---|---|")
    for name, shape in SHAPES.items():
        rng = random.Random(args.seed)
        counts = [poisson(rng, shape(t, args.seconds)) for t in range(args.seconds)]
        for horizon in HORIZONS:
            e = forecast_error(counts, horizon_s=horizon)
            print(
                f"| {name} | {horizon} s | {e.mean_actual:.1f} | {e.mae:.1f} | {e.relative:.0%} | "
                f"{e.mae_naive:.1f} | {mean_window_mae(counts, horizon):.1f} |"
            )
    print("\nreproduce: .venv/bin/python -m bench.forecast_bench")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
