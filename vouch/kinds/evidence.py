"""Evidence: a pointer to a span of a source (`L10-L20`, `#sec-3`, a transcript's turns
`T12-T14`), with an optional quote."""

from __future__ import annotations

import re
from typing import Any

from vouch.kinds.base import Chunk, Field, Kind, Obj, collapse

LINE_SPAN = re.compile(r"^L(\d+)(?:-L(\d+))?\Z")
ANCHOR = re.compile(r"^#[\w.-]+\Z")
REDACTED_ANCHOR = "#redacted"  # a heading's anchor into a redacted source, replaced
TURN_SPAN = re.compile(r"^T(\d+)(?:-T(\d+))?\Z")  # turns of a transcript source (issue 19)

SCHEMA = (
    Field("id", "str", required=True, ids=True),
    Field("source_id", "str", required=True, ids=True),
    Field("locator", "str", required=True),
    Field("quote", "str"),
    Field("hash", "str"),
    Field("created_at", "time", required=True),
)

KIND = Kind(
    name="evidence",
    plural="evidence",
    fields=SCHEMA,
    label_field="quote",
    identity=lambda o: {
        k: collapse(str(o.get(k) or "")) for k in ("source_id", "locator", "quote")
    },
    title_of=lambda o: str(o.get("locator") or ""),
    type_field=None,
)

path_for = KIND.path_for
load = KIND.load
dump = KIND.dump
new = KIND.new


def locator_errors(locator: str) -> list[str]:
    m = LINE_SPAN.match(locator)
    if m:
        start, end = int(m.group(1)), int(m.group(2) or m.group(1))
        if start < 1 or end < start:
            return [f"locator {locator!r} must be L<start>-L<end> with 1 <= start <= end"]
        return []
    m = TURN_SPAN.match(locator)
    if m:
        start, end = int(m.group(1)), int(m.group(2) or m.group(1))
        if start < 1 or end < start:
            return [f"locator {locator!r} must be T<start>-T<end> with 1 <= start <= end"]
        return []
    if ANCHOR.match(locator):
        return []
    return [f"locator {locator!r} must look like L10-L20, L7, T12-T14 (turns) or #section-anchor"]


def span_text(content: str, locator: str) -> str | None:
    """The text a line-span locator points at, or None when it lies outside `content`."""
    m = LINE_SPAN.match(locator)
    if not m:
        return None
    lines = content.split("\n")
    start, end = int(m.group(1)), int(m.group(2) or m.group(1))
    if end > len(lines):
        return None
    return "\n".join(lines[start - 1 : end])


def chunks(obj: Obj, content: Any = None) -> list[Chunk]:
    return []  # evidence is found through the claims that cite it and its source
