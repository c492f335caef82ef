"""The comparison table and how Tokenway compares with random scheduling (the seed article's claims)."""

from __future__ import annotations

from bench.routing_sim.replay import Tally, load_swing
from bench.routing_sim.run import bench_catalog
from bench.routing_sim.workload import Request
from contracts.snapshot import OfferingSnapshot

HEADER = (
    "router", "success", "1st-try fail", "429s", "failovers", "p50 TTFT", "p90 TTFT", "$/1M tok",
    "cache hit", "peak RPM", "load swing", "lost $", "thrpt vs rnd",
)  # fmt: skip
SEED_CLAIMS = "seed article (its engine vs random): +40% throughput, -14% rejected requests, load swing within 15%"


def _offerings() -> tuple[dict[int, OfferingSnapshot], dict[str, list[int]]]:
    catalog = bench_catalog()
    by_id = {o.offering_id: o for o in catalog.offerings}
    by_model: dict[str, list[int]] = {}
    for o in catalog.offerings:
        by_model.setdefault(o.model, []).append(o.offering_id)
    return by_id, by_model


def table(
    results: list[tuple[Tally, float]], requests: list[Request], *, load: str, duration_s: float, command: str
) -> str:
    by_id, by_model = _offerings()
    rows = {t.name: (t, t.row(), *load_swing(t, by_id, by_model)) for t, _ in results}
    base = rows["random"][1]
    kinds = {k: sum(r.kind == k for r in requests) for k in ("chat", "agent", "long", "burst")}
    lines = [
        f"routing simulation, {load} load: {len(requests):,} requests over {duration_s / 60:.0f} virtual minutes "
        f"({', '.join(f'{v:,} {k}' for k, v in kinds.items())})",
        "VIRTUAL TIME, no HTTP: real router code (routing.router.route.plan, HealthBoard, LimitBoard) and the",
        "simulator's own limit/fault/incident/drift/cache/dishonesty/timing/network functions; evaluation",
        "figures from simulated probes (not the Django pipeline); no hedging; every router fails over up to 3x.",
        " | ".join(HEADER),
        " | ".join("---" for _ in HEADER),
    ]
    for name, (_, row, peak, swing) in rows.items():
        closed = base["mean_total_s"] / row["mean_total_s"] - 1
        lines.append(" | ".join((
            name, f"{row['success']:.2%}", f"{row['first_try_failed']:.2%}", str(row["429s"]), str(row["failovers"]),
            f"{row['p50'] * 1000:.0f} ms", f"{row['p90'] * 1000:.0f} ms", f"{row['cost_per_m']:.3f}",
            f"{row['cache']:.1%}", f"{peak:.0f}%", f"{swing:.0f} pp", f"{row['lost_usd']:.2f}", f"{closed:+.0%}",
        )))  # fmt: skip
    lines += _versus(rows)
    lines.append(f"reproduce: {command}   ({sum(d for _, d in results):.0f} s for {len(results)} routers)")
    return "\n".join(lines) + "\n"


def _versus(rows: dict) -> list[str]:
    _, base, _, base_swing = rows["random"]
    _, ours, _, swing = rows["tokenway:balanced"]
    fewer = 1 - ours["first_try_failed"] / base["first_try_failed"] if base["first_try_failed"] else 0.0
    return [
        "",
        f"Tokenway balanced vs random: throughput (closed loop, requests per client-second) "
        f"{base['mean_total_s'] / ours['mean_total_s'] - 1:+.0%}, open loop (answered share) "
        f"{ours['success'] / base['success'] - 1:+.1%}; rejected first attempts {-fewer:+.0%}; "
        f"upstream 429s {base['429s']} -> {ours['429s']}; cost per 1M tokens "
        f"{ours['cost_per_m'] / base['cost_per_m'] - 1:+.0%}; load swing {swing:.0f} pp (random {base_swing:.0f} pp).",
        SEED_CLAIMS,
    ]


VARIANT_HEADER = "variant router answered goodput tok/s p50_TTFT p90_TTFT billed_$ $/1M_tok 429s lost_$ good/$"
OURS = "tokenway:balanced"
WHERE_BETTER = (("goodput", False), ("p50", True), ("p90", True), ("tok_s", False))  # (figure, lower is better)
STRONG = ("least-latency", "litellm-latency")


def composite(row: dict[str, float], requests: int) -> float:
    """Good answers per dollar: requests answered with their first byte within the SLO, per dollar
    billed (over-billing included). Higher is better; a failed, slow, over-billed or dear answer lowers it."""
    return row["goodput"] * requests / row["cost_usd"] if row["cost_usd"] else 0.0


def variant_rows(name: str, results: list[tuple[Tally, float]]) -> list[str]:
    lines = []
    for tally, _ in results:
        row = tally.row()
        cells = (
            f"{row['success']:.2%}",
            f"{row['goodput']:.2%}",
            f"{row['tok_s']:.0f}",
            f"{row['p50'] * 1000:.0f} ms",
            f"{row['p90'] * 1000:.0f} ms",
            f"{row['cost_usd']:.2f}",
            f"{row['cost_per_m']:.3f}",
            str(row["429s"]),
            f"{row['lost_usd']:.2f}",
            f"{composite(row, tally.requests):.1f}",
        )
        lines.append(" | ".join((name, tally.name, *cells)))
    return lines


def verdict(name: str, results: list[tuple[Tally, float]]) -> str:
    """One line: where Tokenway balanced wins and where a strong baseline does."""
    rows = {t.name: (t.row(), t.requests) for t, _ in results}
    ours, n = rows[OURS]
    notes = []
    for base in STRONG:
        theirs, _ = rows[base]
        lead = composite(ours, n) / composite(theirs, n) - 1
        better = [k for k, low in WHERE_BETTER if theirs[k] != ours[k] and (theirs[k] < ours[k]) == low]
        notes.append(f"vs {base} {lead:+.1%} good/$" + (f" ({base} better on {', '.join(better)})" if better else ""))
    return f"{name}: " + "; ".join(notes)


def variants_header() -> list[str]:
    names = [name.replace("_", " ") for name in VARIANT_HEADER.split()]
    return [" | ".join(names), " | ".join("---" for _ in names)]
