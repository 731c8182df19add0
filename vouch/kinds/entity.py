"""Entities: the people, projects, systems and concepts that claims are about."""

from __future__ import annotations

from typing import Any

from vouch.kinds.base import Chunk, Field, Kind, Obj, collapse

TYPES = (
    "person",
    "project",
    "repo",
    "company",
    "concept",
    "decision",
    "workflow",
    "file",
    "api",
    "incident",
    "source",
    "agent",
    "tool",
    "team",
    "system",
    "library",  # a package code depends on (requests, numpy): the docs people register
)

SCHEMA = (
    Field("id", "str", required=True, ids=True),
    Field("name", "text", required=True),
    Field("type", "str", required=True, enum=TYPES),
    Field("aliases", "list"),
    Field("description", "str"),
    Field("tags", "list"),
    Field("proposed_by", "str"),
    Field("approved_by", "str"),
    Field("created_at", "time", required=True),
    Field("updated_at", "time"),
    Field("redacted_hash", "str"),  # a redacted entity: the digest its id was made from
)

KIND = Kind(
    name="entity",
    plural="entities",
    fields=SCHEMA,
    label_field="name",
    identity=lambda o: {"name": collapse(str(o.get("name") or "")).lower(), "type": o.get("type")},
    title_of=lambda o: str(o.get("name") or ""),
)

path_for = KIND.path_for
load = KIND.load
dump = KIND.dump
new = KIND.new


def chunks(obj: Obj, content: Any = None) -> list[Chunk]:
    parts = [str(obj["name"])]
    if obj.get("aliases"):
        parts.append("(" + ", ".join(obj["aliases"]) + ")")
    if obj.get("description"):
        parts.append("— " + str(obj["description"]))
    return [KIND.chunk(obj, " ".join(parts))]
