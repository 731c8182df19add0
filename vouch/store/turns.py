"""Transcript sources on disk: checked at intake, read turn by turn afterwards (issue 19).

A transcript is registered only when every line of it reads (`check`): the error names
the line and nothing is written. Its meta.yaml records the format it was read in
(`metadata.transcript`: format, turns, sessions, speakers, first and last time). Reading
is deterministic (`parse_content`), so a turn locator is as stable as a line span.
"""

from __future__ import annotations

from typing import Any

from vouch.core import transcripts
from vouch.core.transcripts import Transcript, TranscriptError, parse_content
from vouch.errors import NotFound, UsageError, ValidationFailed
from vouch.kinds.base import Obj

TYPE = "transcript"


def check(content: bytes, where: str) -> dict[str, Any]:
    """`metadata.transcript` for bytes registered as a transcript; E102 naming the line
    when they are not one."""
    try:
        return parse_content(content).summary()
    except TranscriptError as exc:
        raise ValidationFailed([f"{where}: {exc}"], what="transcript") from None


def detected(content: bytes) -> dict[str, Any] | None:
    """`metadata.transcript` when content of no declared type reads as a transcript."""
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        return None
    fmt = transcripts.detect(text)
    return None if fmt is None else transcripts.parse(text, fmt).summary()


def read(meta: Obj, content: bytes) -> Transcript:
    """The turns of a registered transcript source."""
    if meta.get("type") != TYPE:
        raise UsageError(
            f"source {str(meta.get('id'))[:12]}… is not a transcript",
            hint="turns (T12) are read from sources registered with --type transcript",
        )
    try:
        return parse_content(content)
    except TranscriptError as exc:
        raise ValidationFailed([str(exc)], what="transcript") from None


def parse_span(raw: str) -> tuple[int, int] | None:
    """`T12` / `T12-T14` / `12-14` / `12` → (start, end); None when it is not one."""
    from vouch.kinds.evidence import TURN_SPAN

    text = raw.strip()
    m = TURN_SPAN.match(text) or TURN_SPAN.match(
        "-".join(f"T{p.strip()}" for p in text.split("-", 1))
    )
    if not m:
        return None
    return int(m.group(1)), int(m.group(2) or m.group(1))


def show(meta: Obj, content: bytes, span: str | None) -> dict[str, Any]:
    """`vouch show SOURCE --turns 10-14`: those turns (all without a span)."""
    found = read(meta, content)
    total = len(found.turns)
    start, end = (1, total)
    if span:
        parsed = parse_span(span)
        if parsed is None or parsed[0] < 1 or parsed[1] < parsed[0]:
            raise UsageError(f"--turns {span!r} must look like 10-14 or T10-T14")
        start, end = parsed
        if end > total:
            raise NotFound(
                f"--turns {span}: the transcript has {total} turns",
                hint=f"ask for turns within 1-{total}",
            )
    return {
        "id": meta.get("id"),
        "title": meta.get("title") or meta.get("locator"),
        "format": found.format,
        "turns": {"start": start, "end": end, "total": total},
        "items": [t.to_json() for t in found.span(start, end)],
    }
