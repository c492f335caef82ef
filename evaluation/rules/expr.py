"""Row expressions the metric rules are written in, each read two ways: in Python over one probe row
and as SQL over ``evaluation_proberesult r``. A rule written with these cannot mean one thing in the
raw-row evaluation and another in the rollup SQL.

Values are numbers or None (SQL: float8 or NULL); conditions are booleans (SQL: a NULL condition is
false, as in Python a missing value fails every test but ``Present``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

_NAME = re.compile(r"^[a-z0-9_]+$")  # column names, detail keys and literals are inlined in SQL


def _checked(name: str) -> str:
    if not _NAME.match(name):
        raise ValueError(f"not a plain name: {name!r}")
    return name


class ProbeRow(Protocol):
    """What a rule reads of one probe: a ``ProbeResult`` row or a probe ``Outcome`` before it is saved."""

    @property
    def kind(self) -> str: ...
    @property
    def variant(self) -> str: ...
    @property
    def error_class(self) -> str: ...
    @property
    def ttft_ms(self) -> float | None: ...
    @property
    def tps(self) -> float | None: ...
    @property
    def total_ms(self) -> float | None: ...
    @property
    def input_tokens(self) -> int | None: ...
    @property
    def cached_tokens(self) -> int | None: ...
    @property
    def details(self) -> Mapping[str, Any]: ...


# --- values --------------------------------------------------------------------------------------


class Value:
    def of(self, row: ProbeRow) -> float | None:
        raise NotImplementedError

    def sql(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class Column(Value):
    """A numeric column; ``default`` stands in for NULL (None: a NULL stays missing)."""

    name: str
    default: float | None = None

    def __post_init__(self) -> None:
        _checked(self.name)

    def of(self, row: ProbeRow) -> float | None:
        value = getattr(row, self.name)
        return self.default if value is None else float(value)

    def sql(self) -> str:
        column = f"r.{self.name}::float8"
        return column if self.default is None else f"coalesce({column}, {float(self.default)!r}::float8)"


@dataclass(frozen=True, slots=True)
class Detail(Value):
    """A number in the row's ``details`` JSON; ``default`` stands in for a missing key or null."""

    key: str
    default: float | None = None

    def __post_init__(self) -> None:
        _checked(self.key)

    def of(self, row: ProbeRow) -> float | None:
        value = row.details.get(self.key)
        return self.default if value is None else float(value)

    def sql(self) -> str:
        found = f"(r.details->>'{self.key}')::float8"
        return found if self.default is None else f"coalesce({found}, {float(self.default)!r}::float8)"


@dataclass(frozen=True, slots=True)
class Quotient(Value):
    """top / bottom; missing when either is missing or bottom is zero."""

    top: Value
    bottom: Value

    def of(self, row: ProbeRow) -> float | None:
        top, bottom = self.top.of(row), self.bottom.of(row)
        return None if top is None or not bottom else top / bottom

    def sql(self) -> str:
        return f"({self.top.sql()}) / nullif({self.bottom.sql()}, 0)"


@dataclass(frozen=True, slots=True)
class Product(Value):
    left: Value
    right: Value

    def of(self, row: ProbeRow) -> float | None:
        left, right = self.left.of(row), self.right.of(row)
        return None if left is None or right is None else left * right

    def sql(self) -> str:
        return f"({self.left.sql()}) * ({self.right.sql()})"


# --- conditions ----------------------------------------------------------------------------------


class Cond:
    def holds(self, row: ProbeRow) -> bool:
        raise NotImplementedError

    def sql(self) -> str:
        raise NotImplementedError

    def __and__(self, other: Cond) -> Cond:
        return All((self, other))

    def __invert__(self) -> Cond:
        return Not(self)


@dataclass(frozen=True, slots=True)
class Always(Cond):
    def holds(self, row: ProbeRow) -> bool:
        return True

    def sql(self) -> str:
        return "true"


@dataclass(frozen=True, slots=True)
class All(Cond):
    parts: tuple[Cond, ...]

    def holds(self, row: ProbeRow) -> bool:
        return all(part.holds(row) for part in self.parts)

    def sql(self) -> str:
        return "(" + " AND ".join(part.sql() for part in self.parts) + ")"


@dataclass(frozen=True, slots=True)
class Not(Cond):
    part: Cond

    def holds(self, row: ProbeRow) -> bool:
        return not self.part.holds(row)

    def sql(self) -> str:
        return f"NOT coalesce({self.part.sql()}, false)"


@dataclass(frozen=True, slots=True)
class Succeeded(Cond):
    """The probe got an answer it accepted (no error class)."""

    def holds(self, row: ProbeRow) -> bool:
        return not row.error_class

    def sql(self) -> str:
        return "r.error_class = ''"


@dataclass(frozen=True, slots=True)
class ErrorIn(Cond):
    classes: frozenset[str]

    def __post_init__(self) -> None:
        for name in self.classes:
            _checked(name)

    def holds(self, row: ProbeRow) -> bool:
        return row.error_class in self.classes

    def sql(self) -> str:
        return "r.error_class IN (" + ", ".join(f"'{c}'" for c in sorted(self.classes)) + ")"


@dataclass(frozen=True, slots=True)
class VariantIn(Cond):
    variants: tuple[str, ...]

    def __post_init__(self) -> None:
        for name in self.variants:
            _checked(name)

    def holds(self, row: ProbeRow) -> bool:
        return row.variant in self.variants

    def sql(self) -> str:
        return "r.variant IN (" + ", ".join(f"'{v}'" for v in self.variants) + ")"


@dataclass(frozen=True, slots=True)
class Present(Cond):
    value: Value

    def holds(self, row: ProbeRow) -> bool:
        return self.value.of(row) is not None

    def sql(self) -> str:
        return f"({self.value.sql()}) IS NOT NULL"


@dataclass(frozen=True, slots=True)
class Positive(Cond):
    value: Value

    def holds(self, row: ProbeRow) -> bool:
        found = self.value.of(row)
        return found is not None and found > 0

    def sql(self) -> str:
        return f"coalesce(({self.value.sql()}) > 0, false)"


@dataclass(frozen=True, slots=True)
class HasDetail(Cond):
    """The key is in ``details`` (even with a null value)."""

    key: str

    def __post_init__(self) -> None:
        _checked(self.key)

    def holds(self, row: ProbeRow) -> bool:
        return self.key in row.details

    def sql(self) -> str:
        return f"r.details ? '{self.key}'"


@dataclass(frozen=True, slots=True)
class DetailTrue(Cond):
    """``details[key]`` is JSON true."""

    key: str

    def __post_init__(self) -> None:
        _checked(self.key)

    def holds(self, row: ProbeRow) -> bool:
        return row.details.get(self.key) is True

    def sql(self) -> str:
        return f"coalesce(r.details->'{self.key}' = 'true'::jsonb, false)"


ALWAYS = Always()
