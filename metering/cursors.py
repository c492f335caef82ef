"""Opaque keyset cursors for newest-first lists: the (finished_at, id) of the last row seen."""

from __future__ import annotations

import base64
import binascii
from datetime import UTC, datetime, timedelta

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MAX_CURSOR_CHARS = 64  # two integers, base64url: anything longer was not made here


class BadCursor(ValueError):
    """The cursor was not made by ``cursor_encode``."""


def cursor_encode(finished_at: datetime, row_id: int) -> str:
    micros = (finished_at - EPOCH) // timedelta(microseconds=1)  # exact: PostgreSQL keeps microseconds
    return base64.urlsafe_b64encode(f"{micros}.{row_id}".encode()).decode().rstrip("=")


def cursor_decode(cursor: str) -> tuple[datetime, int]:
    if not cursor or len(cursor) > MAX_CURSOR_CHARS:
        raise BadCursor(cursor)
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
        micros, row_id = (int(part) for part in text.split("."))
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise BadCursor(cursor) from exc
    if row_id <= 0 or not 0 <= micros < 2**53:
        raise BadCursor(cursor)
    return EPOCH + timedelta(microseconds=micros), row_id
