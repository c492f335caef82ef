"""The rules as SQL: per probe kind, the (counter, value) pairs one row of ``evaluation_proberesult r``
adds to its rollup. Bind ``sql_params()`` with the statement."""

from __future__ import annotations

import math

from evaluation.rules.definitions import measures_of
from evaluation.rules.spec import Pair
from evaluation.stats.sketch import GAMMA, MIN_VALUE


def kind_pairs(kind: str) -> list[Pair]:
    return [pair for measure in measures_of(kind) for pair in measure.sql_pairs()]


def sql_params() -> dict[str, float]:
    return {"min": MIN_VALUE, "ln_gamma": math.log(GAMMA)}
