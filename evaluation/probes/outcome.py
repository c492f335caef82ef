"""What one probe request produced: the fields of a ProbeResult row, before it is saved."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

EMBEDDING_VARIANT = "embed"  # the variant of an embedding offering's probes, in every kind (probes/embedding.py)


@dataclass(slots=True)
class Outcome:
    kind: str
    variant: str
    started_at: float  # epoch seconds
    ttft_ms: float | None = None  # first token of any kind, reasoning included
    tps: float | None = None  # output tokens/s while they were produced, reasoning included
    total_ms: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    error_class: str = ""
    http_status: int | None = None
    details: dict[str, Any] = field(default_factory=dict)
    answer_ttft_ms: float | None = None  # first answer token (after any reasoning)

    @property
    def ok(self) -> bool:
        return not self.error_class
