"""The recovery curve: each faulted offering's share of its model's traffic per 30-second window (before,
during and after its fault), beside what the router read at the end of the window."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from contracts.snapshot import OfferingSnapshot
from tests.recovery.observe import Sample, Watch, in_window, served_share
from tests.reliability.load import Load

WINDOW_S = 30.0
BASELINE_S = 60.0
BACK_WITHIN_S = 120.0


@dataclass(frozen=True)
class Report:
    table: str
    pre: dict[int, float | None]  # offering -> share in the minute before its fault
    back: dict[int, float | None]  # ... in the window ending BACK_WITHIN_S after recovery
    late_fault: dict[int, float | None]  # ... in the fault's second half


def _pct(share: float | None) -> str:
    return "   -" if share is None else f"{share:4.0%}"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def _router_view(sample: Sample | None, failing: OfferingSnapshot, slow: OfferingSnapshot) -> str:
    """What the router read: the failed offering's live error EWMA and evaluation's error rates (hour / 15 min);
    the slowed one's live TTFT EWMA and evaluation's TTFT p50 (hour / 15 min); open incidents."""
    if sample is None:
        return ""
    a, b = sample.stats.get(failing.offering_id), sample.stats.get(slow.offering_id)
    live_e = sample.live.get(f"{failing.offering_id}:e", 0.0)
    live_l = sample.live.get(f"{slow.offering_id}:l")
    left = f"live err {live_e:4.2f}"
    if a is not None:
        left += (
            f"  eval err {_pct(a.error_rate)}/{_pct(a.recent_error_rate)} n {a.n}/{a.recent_n} {','.join(a.incidents)}"
        )
    right = f"live ttft {_ms(live_l)}"
    if b is not None:
        right += (
            f"  eval ttft {_ms(b.ttft_p50_ms)}/{_ms(b.recent_ttft_p50_ms)} n {b.n}/{b.recent_n} {','.join(b.incidents)}"
        )
    return f"{left:<52} | {right}"


def _why(record: dict[str, Any]) -> str:
    """One request's route explanation: each candidate's score, its non-zero parts and flags."""
    out = []
    for c in record.get("route_candidates") or []:
        parts = " ".join(f"{k}{v:+.2f}" for k, v in (c.get("parts") or {}).items() if abs(v) >= 0.005)
        flags = f" [{','.join(c['flags'])}]" if c.get("flags") else ""
        score = "-" if c.get("score") is None else f"{c['score']:.2f}"
        out.append(f"{c['provider']} {c['verdict']} {score} ({parts}){flags}")
    return " | ".join(out)


def _explanations(
    loads: dict[str, Load],
    records: dict[str, dict[str, Any]],
    offerings: tuple[OfferingSnapshot, ...],
    fault_at: float,
    end: float,
) -> list[str]:
    """Why the last answered request of each window went where it went, from the fault on."""
    lines = ["", "[recovery] the route of the last answered request per window (score parts, flags)"]
    for offering in offerings:
        start = fault_at
        while start + WINDOW_S <= end:
            window = [
                a for a in in_window(loads[offering.model].result.answers, start, WINDOW_S) if a.request_id in records
            ]
            if window:
                lines.append(
                    f"{offering.model:>10} {start - fault_at:5.0f}  {_why(records[window[-1].request_id or ''])}"
                )
            start += WINDOW_S
    return lines


def report(
    loads: dict[str, Load],
    records: dict[str, dict[str, Any]],
    watch: Watch,
    failing: OfferingSnapshot,
    slow: OfferingSnapshot,
    fault_at: float,
    recovered_at: float,
    after_s: float,
) -> Report:
    def share(offering: OfferingSnapshot, start: float, seconds: float) -> tuple[float | None, int]:
        return served_share(
            in_window(loads[offering.model].result.answers, start, seconds), records, offering.offering_id
        )

    head = (
        f"{'t (s)':>6} {'phase':<8} {failing.provider + '/' + failing.model:>22} {slow.provider + '/' + slow.model:>22}"
    )
    lines = [
        "",
        f"[recovery] share of each model's answered requests served by the faulted offering, per {WINDOW_S:.0f}s",
        head,
    ]
    start = fault_at - BASELINE_S
    while start + WINDOW_S <= recovered_at + after_s:
        phase = "before" if start < fault_at else "fault" if start < recovered_at else "after"
        cells = [share(o, start, WINDOW_S) for o in (failing, slow)]
        text = " ".join(f"{_pct(s)} of {n:3d}".rjust(22) for s, n in cells)
        view = _router_view(watch.last_before(start + WINDOW_S), failing, slow)
        lines.append(f"{start - fault_at:6.0f} {phase:<8} {text}   {view}")
        start += WINDOW_S
    lines += _explanations(loads, records, (failing, slow), fault_at, recovered_at + after_s)
    back_start = recovered_at + BACK_WITHIN_S - WINDOW_S
    offerings = (failing, slow)
    return Report(
        table="\n".join(lines),
        pre={o.offering_id: share(o, fault_at - BASELINE_S, BASELINE_S)[0] for o in offerings},
        back={o.offering_id: share(o, back_start, WINDOW_S)[0] for o in offerings},
        late_fault={
            o.offering_id: share(o, (fault_at + recovered_at) / 2, (recovered_at - fault_at) / 2)[0] for o in offerings
        },
    )
