"""Opaque paging cursors, bound to the corpus revision and to the query they page.

A cursor is urlsafe base64 of a small JSON object: the corpus revision the first page
was computed on, a fingerprint of the query and every option that shapes the ranking,
the candidate depth that page used, and the offset of the next result. Re-running the
query at the same revision and depth yields the same ranked list, so pages never
overlap and never skip. When the corpus changed since the cursor was issued the ranking
could have shifted under the caller: that is `stale_cursor`, and the caller restarts.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping
from typing import Any, NamedTuple

from vouch.core import safeload
from vouch.errors import StaleCursor, UsageError

VERSION = 1
MAX_DEPTH = 1 << 20  # far above any real candidate depth (3 × the largest --top)


class InvalidCursor(UsageError):
    """A cursor that is not one of ours, or belongs to a different query."""


class Cursor(NamedTuple):
    """Where a page ends: the corpus revision and ranking it belongs to, its offset
    into the ranking and the candidate depth the first page used."""

    revision: str
    fingerprint: str
    offset: int
    depth: int


def fingerprint(shape: Mapping[str, Any]) -> str:
    """A short stable hash of everything that shapes the ranking (not top/offset)."""
    canonical = json.dumps(shape, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def encode(cursor: Cursor) -> str:
    body = {
        "v": VERSION,
        "r": cursor.revision,
        "f": cursor.fingerprint,
        "o": cursor.offset,
        "d": cursor.depth,
    }
    raw = json.dumps(body, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode(token: str, *, revision: str, expected_fingerprint: str) -> Cursor:
    """Parse a cursor for this query at this revision; raise InvalidCursor / StaleCursor."""
    try:
        padded = token.strip() + "=" * (-len(token.strip()) % 4)
        body = safeload.json_value(base64.urlsafe_b64decode(padded.encode("ascii")), "cursor")
        cursor = Cursor(str(body["r"]), str(body["f"]), int(body["o"]), int(body["d"]))
        if body.get("v") != VERSION or cursor.offset < 0 or not 1 <= cursor.depth <= MAX_DEPTH:
            raise ValueError("unsupported cursor")
    except (
        ValueError,
        KeyError,
        TypeError,
        UnicodeError,
        binascii.Error,
        safeload.Unreadable,
    ) as exc:
        raise InvalidCursor(
            "not a valid search cursor", hint="pass the next_cursor of a previous search unchanged"
        ) from exc
    if cursor.fingerprint != expected_fingerprint:
        raise InvalidCursor(
            "this cursor belongs to a different query or different options",
            hint="repeat the original query and options with --cursor",
        )
    if cursor.revision != revision:
        raise StaleCursor(
            "the knowledge base changed since this cursor was issued",
            hint="run the search again without --cursor",
        )
    return cursor
