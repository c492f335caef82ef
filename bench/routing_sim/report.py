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
