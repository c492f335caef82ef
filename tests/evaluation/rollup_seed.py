"""Mixed probe rows of every kind (seeded) and the raw-row recompute the rollups must equal."""

from __future__ import annotations

import datetime as dt
import math
import random
from collections import defaultdict

from evaluation.models import ProbeResult
from evaluation.rules.from_counts import row_counts

PERF_ERRORS = ("", "", "", "", "", "", "", "", "server_error", "timeout", "rate_limited", "bad_usage")


def mixed_rows(
    *, offering_ids: list[int], regions: list[str], start: dt.datetime, end: dt.datetime, count: int, seed: int
) -> list[ProbeResult]:
    """``count`` rows at random instants in [start, end): mostly performance probes, some of each other kind."""
    rng = random.Random(seed)
    span = (end - start).total_seconds()
    rows = []
    for _ in range(count):
        at = start + dt.timedelta(seconds=rng.uniform(0, span))
        base = {"offering_id": rng.choice(offering_ids), "region": rng.choice(regions), "started_at": at}
        roll = rng.random()
        if roll < 0.7:
            error = rng.choice(PERF_ERRORS)
            variant = rng.choice(("1k", "1k", "10k"))
            ok = not error
            ttft = rng.lognormvariate(math.log(600 if variant == "1k" else 1500), 0.3) if ok else None
            rows.append(
                ProbeResult(
                    **base,
                    kind="performance",
                    variant=variant,
                    ttft_ms=ttft,
                    tps=rng.gauss(60, 5) if ok else None,
                    error_class=error,
                    answer_ttft_ms=None if ttft is None else ttft * 1.8,  # a reasoning model's answer comes later
                )
            )
        elif roll < 0.82:
            inp = rng.randint(1500, 2500)
            error = "timeout" if rng.random() < 0.05 else ""
            rows.append(
                ProbeResult(
                    **base,
                    kind="cache",
                    variant=rng.choice(("plain", "billing", "stripped")),
                    input_tokens=inp,
                    cached_tokens=rng.choice((0, inp - rng.randint(10, 200))),
                    error_class=error,
                )
            )
        elif roll < 0.9:
            counted = rng.randint(900, 1100)
            reported = round(counted * rng.choice((1.0, 1.0, 1.15)))
            rows.append(
                ProbeResult(
                    **base,
                    kind="price",
                    variant="reported_vs_counted",
                    details={
                        "counted_input": counted,
                        "reported_input": reported,
                        "reported_cost": rng.choice((1000, 1300, None)),
                        "expected_cost": 1000,
                        "token_overcount": reported > counted * 1.1,
                        "price_mismatch": rng.random() < 0.3,
                    },
                )
            )
        elif roll < 0.96:
            correct = rng.randint(3, 5)
            rows.append(
                ProbeResult(
                    **base,
                    kind="quality",
                    variant="canaries",
                    details={"correct": correct, "total": 5},
                    error_class="" if correct == 5 else "wrong_answer",
                )
            )
        else:
            rows.append(
                ProbeResult(
                    **base,
                    kind="capability",
                    variant=rng.choice(("tools", "json_mode")),
                    error_class=rng.choice(("", "", "unsupported", "timeout")),
                )
            )
    return rows


def raw_counts(
    start: dt.datetime, end: dt.datetime, *, regionless: str = "all"
) -> dict[tuple[int, str], dict[str, dict[str, float]]]:
    """Counters per (offering, region) and (offering, "all") summed in Python from raw rows in [start, end)."""
    out: dict[tuple[int, str], dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for row in ProbeResult.objects.filter(started_at__gte=start, started_at__lt=end):
        counts = row_counts(row)
        for key in ((row.offering_id, row.region), (row.offering_id, regionless)):
            target = out[key][row.kind]
            for name, value in counts.items():
                target[name] = target.get(name, 0.0) + value
    return out
