"""The gateway's instruction budget: CI fails when a hot path executes more instructions than its ceiling.

bench/instruction_ceilings.toml keeps, per profile, the instructions last measured and the ceiling (that
figure plus a margin of a few percent for run-to-run noise). The counts come from
bench/gateway_instruction_phases.py (one gateway under callgrind; instructions do not depend on the
machine's load). A change may lower a ceiling; one that raises a ceiling says why in its commit message.

    .venv/bin/python -m bench.instruction_budget                 # measure and check (CI's `instructions` stage)
    .venv/bin/python -m bench.instruction_budget --profile short # one profile

valgrind is on every machine the project builds on (Debian's package); where it is missing the check
fails with that said, rather than passing without having measured.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

CEILINGS = Path(__file__).with_name("instruction_ceilings.toml")


@dataclass(frozen=True)
class Ceiling:
    profile: str
    measured: int  # instructions per unit when the ceiling was last set
    ceiling: int
    unit: str


@dataclass(frozen=True)
class Verdict:
    profile: str
    measured: float | None  # None: the profile was not measured
    ceiling: int
    unit: str

    @property
    def passed(self) -> bool:
        return self.measured is not None and self.measured <= self.ceiling

    def line(self) -> str:
        if self.measured is None:
            return f"| {self.profile} | not measured | {self.ceiling:,} | FAIL: no measurement |"
        change = (self.measured - self.ceiling) / self.ceiling * 100
        state = "ok" if self.passed else "FAIL: over the ceiling"
        return (
            f"| {self.profile} (per {self.unit}) | {self.measured:,.0f} | {self.ceiling:,} | {change:+.1f} % {state} |"
        )


def load_ceilings(text: str) -> dict[str, Ceiling]:
    """Profiles and their ceilings from the TOML text (one table per profile)."""
    data = tomllib.loads(text)
    ceilings = {}
    for profile, row in data.items():
        if not isinstance(row, dict):
            continue
        ceiling = Ceiling(profile, int(row["measured"]), int(row["ceiling"]), str(row.get("unit", "request")))
        if ceiling.ceiling < ceiling.measured:
            raise ValueError(f"{profile}: ceiling {ceiling.ceiling:,} is below its own measurement")
        ceilings[profile] = ceiling
    return ceilings


def check(measured: Mapping[str, float], ceilings: Mapping[str, Ceiling]) -> list[Verdict]:
    """One verdict per ceiling: passed when the measurement is at or under it; a missing measurement fails."""
    return [Verdict(name, measured.get(name), c.ceiling, c.unit) for name, c in ceilings.items()]


def report(verdicts: list[Verdict]) -> str:
    lines = ["| profile | measured instructions | ceiling | vs ceiling |", "|---|---|---|---|"]
    lines += [v.line() for v in verdicts]
    failed = [v.profile for v in verdicts if not v.passed]
    if failed:
        lines.append(
            f"\ninstruction budget: {', '.join(failed)} over the ceiling in {CEILINGS.name}. Make the change cheaper, "
            "or raise the ceiling in the same commit and say why in its message."
        )
    else:
        lines.append("\ninstruction budget: every profile within its ceiling")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="", help="comma-separated profiles (default: every ceiling's)")
    parser.add_argument("--ceilings", type=Path, default=CEILINGS)
    args = parser.parse_args(argv)
    ceilings = load_ceilings(args.ceilings.read_text())
    if args.profile:
        ceilings = {name: ceilings[name] for name in args.profile.split(",")}
    missing = [tool for tool in ("valgrind", "callgrind_control", "node") if shutil.which(tool) is None]
    if missing:
        print(f"instruction budget: NOT CHECKED, {' and '.join(missing)} missing (Debian: apt-get install valgrind)")
        return 1
    from bench.gateway_instruction_phases import measure

    started = time.monotonic()
    results = measure(list(ceilings))
    verdicts = check({name: per for name, (per, _, _) in results.items()}, ceilings)
    print(f"\nGateway instructions vs ceilings ({args.ceilings.name}; measured in {time.monotonic() - started:.0f}s)\n")
    print(report(verdicts))
    return 0 if all(v.passed for v in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
