"""Claims: one statement, typed, with a confidence and the evidence that backs it."""

from __future__ import annotations

from typing import Any

from vouch.kinds.base import SCOPES, Chunk, Field, Kind, Obj, collapse

TYPES = ("fact", "decision", "preference", "workflow", "observation", "question", "warning")
STATUSES = (
    "working",
    "actionable",
    "stable",
    "contested",
    "superseded",
    "archived",
    "redacted",
)
HIDDEN_STATUSES = ("superseded", "archived", "redacted")

SCHEMA = (
    Field("id", "str", required=True, ids=True),
    Field("text", "text", required=True),
    Field("type", "str", enum=TYPES, default="observation"),
    Field("status", "str", enum=STATUSES, default="working"),
    Field("confidence", "float", default=0.7, min=0.0, max=1.0),
    Field("evidence", "list", ids=True),
    Field("entities", "list", ids=True),
    Field("supersedes", "list", ids=True),
    Field("superseded_by", "str", ids=True),
    Field("contradicts", "list", ids=True),
    Field("scope", "str", enum=SCOPES, default="project"),
    Field("tags", "list"),
    Field("session_id", "str"),
    Field("proposed_by", "str"),
    Field("approved_by", "str"),
    Field("created_at", "time", required=True),
    Field("updated_at", "time"),
    Field("last_confirmed_at", "time"),
    Field("redacted_hash", "str"),  # a redacted claim: the digest its id was made from
)

KIND = Kind(
    name="claim",
    plural="claims",
    fields=SCHEMA,
    label_field="text",
    identity=lambda o: {"text": collapse(str(o.get("text") or ""))},
    title_of=lambda o: collapse(str(o.get("text") or ""))[:80],
)

path_for = KIND.path_for
load = KIND.load
dump = KIND.dump
new = KIND.new


def chunks(obj: Obj, content: Any = None) -> list[Chunk]:
    return [KIND.chunk(obj, str(obj["text"]))]
