"""Relations: a typed, directed edge between two objects."""

from __future__ import annotations

from typing import Any

from vouch.kinds.base import Chunk, Field, Kind, Obj

TYPES = (
    "uses",
    "depends_on",
    "contradicts",
    "supersedes",
    "supports",
    "caused_by",
    "owned_by",
    "derived_from",
    "similar_to",
    "blocks",
    "implements",
    "references",
)

SCHEMA = (
    Field("id", "str", required=True, ids=True),
    Field("source", "str", required=True, ids=True),
    Field("relation", "str", required=True, enum=TYPES),
    Field("target", "str", required=True, ids=True),
    Field("confidence", "float", default=0.7, min=0.0, max=1.0),
    Field("evidence", "list", ids=True),
    Field("tags", "list"),
    Field("proposed_by", "str"),
    Field("approved_by", "str"),
    Field("created_at", "time", required=True),
)

KIND = Kind(
    name="relation",
    plural="relations",
    fields=SCHEMA,
    label_field="relation",
    identity=lambda o: {k: o.get(k) for k in ("source", "relation", "target")},
    title_of=lambda o: f"{o.get('source')} {o.get('relation')} {o.get('target')}",
    type_field="relation",
)

path_for = KIND.path_for
load = KIND.load
dump = KIND.dump
new = KIND.new


def chunks(obj: Obj, content: Any = None, labels: dict[str, str] | None = None) -> list[Chunk]:
    labels = labels or {}
    src = labels.get(obj["source"], obj["source"])
    dst = labels.get(obj["target"], obj["target"])
    return [KIND.chunk(obj, f"{src} {str(obj['relation']).replace('_', ' ')} {dst}")]
