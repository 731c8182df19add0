"""What a search hit on a transcript turn carries (issue 19): the turn's number, speaker
and time in `source`, a citation of the turn (`SOURCE:T12`), and its neighbouring turns
of the same session as `context` — never across a session boundary."""

from __future__ import annotations

import re
from typing import Any

from vouch.errors import UsageError

_ISO = re.compile(r"^\d{4}(?:-\d{2}(?:-\d{2}(?:T\d{2}(?::\d{2}(?::\d{2})?)?)?)?)?\Z")


def check_time(flag: str, value: str | None) -> None:
    """`--since` / `--until`: an ISO date or date-time (2023-05, 2023-05-08T10:30)."""
    if value is not None and not _ISO.match(value):
        raise UsageError(
            f"{flag} {value[:40]!r} is not an ISO date",
            hint="e.g. 2023-05, 2023-05-08 or 2023-05-08T10:30",
        )


def turn_fields(row: Any) -> dict[str, Any]:
    """`turn`, `speaker`, `time`, `session` of a turn chunk; nothing for other chunks."""
    if getattr(row, "turn", None) is None:
        return {}
    return {"turn": row.turn, "speaker": row.speaker, "time": row.time, "session": row.session}


def turn_cite(row: Any) -> str | None:
    """`<source>:T12` for a turn chunk, else None."""
    turn = getattr(row, "turn", None)
    return f"{row.id}:T{turn}" if turn is not None and row.kind == "source" else None


def neighbour(info: Any) -> dict[str, Any]:
    return {"turn": info.turn, "speaker": info.speaker, "time": info.time, "text": info.text}


def attach_context(index: Any, results: list[dict[str, Any]]) -> None:
    """Give each turn hit its neighbouring turns (`context`: the one before and after
    it in the same session, in order)."""
    turns = [
        h
        for h in results
        if h.get("kind") == "source"
        and h["source"].get("turn") is not None
        and not h.get("pending")
    ]
    if not turns:
        return
    near = index.neighbours(h["chunk_id"] for h in turns)
    for hit in turns:
        hit["context"] = [neighbour(n) for n in near.get(hit["chunk_id"], [])]
