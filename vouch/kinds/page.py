"""Pages: markdown documents with YAML frontmatter, chunked by heading section."""

from __future__ import annotations

from typing import Any

from vouch.core import headings
from vouch.kinds.base import Chunk, Field, Kind, Obj, collapse

TYPES = (
    "entity",
    "concept",
    "decision",
    "workflow",
    "session",
    "index",
    "log",
    "report",
    "source-summary",
)
STATUSES = ("draft", "active", "stale", "archived", "redacted")

SCHEMA = (
    Field("id", "str", required=True, ids=True),
    Field("title", "text", required=True),
    Field("type", "str", enum=TYPES, default="concept"),
    Field("status", "str", enum=STATUSES, default="active"),
    Field("claims", "list", ids=True),
    Field("entities", "list", ids=True),
    Field("sources", "list", ids=True),
    Field("tags", "list"),
    Field("session_id", "str"),
    Field("proposed_by", "str"),
    Field("approved_by", "str"),
    Field("created_at", "time", required=True),
    Field("updated_at", "time"),
    Field("body", "str", default=""),
    Field("redacted_hash", "str"),  # a redacted page: the digest its id was made from
)

KIND = Kind(
    name="page",
    plural="pages",
    fields=SCHEMA,
    label_field="title",
    identity=lambda o: {
        "title": collapse(str(o.get("title") or "")),
        "body": str(o.get("body") or "").strip(),
    },
    ext=".md",
    body_field="body",
    title_of=lambda o: str(o.get("title") or ""),
)

path_for = KIND.path_for
load = KIND.load
dump = KIND.dump
new = KIND.new

Section = headings.Section


def sections(body: str) -> list[Section]:
    """Split markdown into heading sections (ATX and setext), ignoring code fences."""
    return headings.markdown(body)


def chunks(obj: Obj, content: Any = None) -> list[Chunk]:
    secs = sections(str(obj.get("body") or "")) or [Section("", 0, 1, 1, "")]
    out = []
    for n, sec in enumerate(secs):
        text = sec.text if sec.heading else f"{obj['title']}\n\n{sec.text}".strip()
        out.append(
            KIND.chunk(
                obj,
                text,
                chunk_index=n,
                total_chunks=len(secs),
                section=sec.heading,
                start_line=sec.start_line,
                end_line=sec.end_line,
                heading_level=sec.level or None,
            )
        )
    return out
