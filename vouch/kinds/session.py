"""Sessions: a span of agent work whose proposals may later be crystallised into a page."""

from __future__ import annotations

from typing import Any

from vouch.kinds.base import Chunk, Field, Kind, Obj

STATUSES = ("open", "ended")

SCHEMA = (
    Field("id", "str", required=True, ids=True),
    Field("task", "str"),
    Field("note", "str"),
    Field("status", "str", enum=STATUSES, default="open"),
    Field("actor", "str"),
    Field("proposals", "list"),
    Field("transcript", "str", ids=True),  # the transcript source of its exchange
    Field("created_at", "time", required=True),
    Field("ended_at", "time"),
)

KIND = Kind(
    name="session",
    plural="sessions",
    fields=SCHEMA,
    label_field="task",
    identity=lambda o: {
        "task": o.get("task"),
        "actor": o.get("actor"),
        "created_at": o.get("created_at"),
    },
    title_of=lambda o: str(o.get("task") or ""),
    type_field=None,
)

path_for = KIND.path_for
load = KIND.load
dump = KIND.dump
new = KIND.new


def chunks(obj: Obj, content: Any = None) -> list[Chunk]:
    return []  # sessions are working state, not knowledge
