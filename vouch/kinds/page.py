"""Pages: markdown documents with YAML frontmatter, chunked by heading section."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

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
STATUSES = ("draft", "active", "stale", "archived")

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

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class Section:
    heading: str  # "" for text before the first heading
    level: int  # 0 for text before the first heading
    start_line: int  # 1-based line of the heading (or of the first line)
    end_line: int  # 1-based line of the next heading of any level, or EOF+1
    text: str


def sections(body: str) -> list[Section]:
    """Split markdown into heading sections, ignoring `#` lines inside code fences."""
    lines = body.split("\n")
    marks: list[tuple[int, int, str]] = []  # (line index, level, heading)
    in_fence = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        m = None if in_fence else _HEADING.match(line)
        if m:
            marks.append((i, len(m.group(1)), m.group(2).strip()))
    out: list[Section] = []
    starts = [(0, 0, "")] if not marks or marks[0][0] > 0 else []
    bounds = starts + marks
    for n, (i, level, heading) in enumerate(bounds):
        end = bounds[n + 1][0] if n + 1 < len(bounds) else len(lines)
        text = "\n".join(lines[i:end]).strip()
        if text or heading:
            out.append(Section(heading, level, i + 1, end + 1, text))
    return out


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
