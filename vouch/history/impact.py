"""`vouch impact ID`: what rests on an object (issue 38 item 6).

Before a supersede, an archive or a delete is decided, the reviewer should see what it
touches: the claims citing a source (directly, or through an evidence span into it), the
pages listing a claim, an entity or a source, the relations with it at either end or as
evidence, the claims superseding, superseded by or contradicting it. Read from the work
tree's knowledge (what this branch holds approved): `git grep` finds the files naming
the id, and each is read to confirm the field that names it. Read-only.
"""

from __future__ import annotations

from typing import Any

from vouch.core import ids
from vouch.errors import InvalidId, NotFound, VouchError
from vouch.git.history import grep_paths
from vouch.health.files import catalog
from vouch.kinds import KINDS
from vouch.kinds import source as source_kind
from vouch.store.kb import KB

SHOWN = 500  # objects listed; the counts are always whole


def impact(kb: KB, object_id: str) -> dict[str, Any]:
    kind = _kind_of(kb, object_id)
    found = _naming(kb, [object_id])
    for r in found:
        del r["named"]
    spans = [r for r in found if r["kind"] == "evidence"] if kind == "source" else []
    if spans:  # claims citing the source through an evidence span into it
        through = {str(s["id"]) for s in spans}
        for r in _naming(kb, sorted(through)):
            if r["kind"] != "evidence" and r["id"] != object_id:
                r["through"] = r.pop("named")
                found.append(r)
    seen: set[tuple[str, str]] = set()
    unique = []
    for r in sorted(found, key=lambda r: (r["kind"], r["id"], r["field"])):
        if (r["kind"], r["id"]) not in seen:
            seen.add((r["kind"], r["id"]))
            unique.append(r)
    counts: dict[str, int] = {}
    for r in unique:
        counts[r["kind"]] = counts.get(r["kind"], 0) + 1
    return {
        "id": object_id,
        "kind": kind,
        "referenced_by": unique[:SHOWN],
        "counts": counts,
        "truncated": len(unique) > SHOWN,
    }


def _kind_of(kb: KB, object_id: str) -> str:
    if ids.is_source_id(object_id):
        if (kb.dir / source_kind.path_for(object_id)).is_file():
            return "source"
    elif ids.is_object_id(object_id):
        for name, kind in KINDS.items():
            if name != "source" and (kb.dir / kind.path_for(object_id)).is_file():
                return name
    else:
        raise InvalidId(f"{object_id!r} is not an object or source id", hint="give an id")
    raise NotFound(f"no object {object_id} here", hint="`vouch list` names what is here")


def _naming(kb: KB, wanted: list[str]) -> list[dict[str, Any]]:
    """The objects with an id field holding one of `wanted`: {kind, id, field, status,
    title, named}."""
    start = kb.rel(".") + "/"
    dirs = [kb.rel(k.directory) for n, k in KINDS.items() if n != "source"]
    out: list[dict[str, Any]] = []
    for path in grep_paths(kb.repo, wanted, dirs):
        entry = catalog(path[len(start) :]) if path.startswith(start) else None
        if entry is None or entry.kind not in KINDS or entry.id is None or entry.kind == "source":
            continue
        kind = KINDS[entry.kind]
        try:
            obj = kb.read(kind, entry.id)
        except (VouchError, OSError, ValueError):  # an unreadable file: lint reports it
            continue
        if obj is None or obj.get("id") in wanted:
            continue
        for field, _, named in kind.naming(obj, wanted):
            out.append(
                {
                    "kind": kind.name,
                    "id": str(obj["id"]),
                    "field": field,
                    "status": obj.get("status"),
                    "title": kind.title_of(obj),
                    "named": named,
                }
            )
    return out
