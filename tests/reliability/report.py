"""One printed (and collected) row per fault: the figures the chaos suite asserts."""

from __future__ import annotations

from pathlib import Path

from tests.reliability.load import LoadResult

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "artifacts" / "reliability.md"
HEADER = (
    "| fault | requests | 200 | 5xx | 503+Retry-After | no answer | lost | double-billed | recover s |\n"
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
)


def start_table() -> None:
    TABLE.parent.mkdir(exist_ok=True)
    TABLE.write_text(HEADER)


def report(fault: str, result: LoadResult, *, lost: int, double: int, recover_s: float | None) -> str:
    recover = "-" if recover_s is None else f"{recover_s:.1f}"
    row = (
        f"| {fault} | {result.sent} | {len(result.ok_ids())} | {len(result.server_errors)} | "
        f"{result.unavailable_with_retry_after} | {result.no_answer} | {lost} | {double} | {recover} |"
    )
    with TABLE.open("a") as out:
        out.write(row + "\n")
    print(f"\n[reliability] {row}")
    return row
