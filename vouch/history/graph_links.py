"""What the graph is made of: objects read by id (from the work tree, one commit, or the
open proposals), the edges each one draws, and the objects naming a set of ids.

Every object is read through the kind's validating loader and drawn only if its file
holds the id its path names; an evidence span is resolved where the citing object is
(a proposal's own commit for a pending claim). Read-only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, NamedTuple

from vouch.core import ids
from vouch.errors import VouchError
from vouch.git.history import grep_paths
from vouch.health.files import catalog
from vouch.history.snapshot import Snapshot
from vouch.kinds import GATED, KINDS, Obj
from vouch.store.kb import KB


class Item(NamedTuple):
    """One object as the graph reads it: where from (`pending`: the open proposal that
    adds or changes it) and the snapshot its evidence ids resolve in."""

    kind: str
    obj: Obj
    pending: str | None
    snap: Snapshot


class Link(NamedTuple):
    """One edge an object draws: from -> to, its kind (`cites`, `about`, `lists`,
    `supersedes`, `contradicts`, or a relation's type) and what it says."""

    source: str
    target: str
    kind: str
    relation: str | None = None  # the relation object's id, for a relation's edge
    note: str | None = None  # a cited span's locator
    pending: str | None = None
    named: str | None = None  # the kind the naming field holds (read that kind first)


class Reader:
    """Objects by id from the work tree (or one commit), and those open proposals hold."""

    def __init__(self, kb: KB, commit: str | None = None):
        self.kb = kb
        self.commit = commit
        self.snap = Snapshot(kb, commit)
        self.pending: dict[str, Item] = {}
        self._cache: dict[str, Item | None] = {}
        self.drawn: dict[tuple[str, str, str | None], list[Link]] = {}  # links(), once each

    def include_pending(self) -> None:
        """Add what open proposals hold: each proposal's object at its commit."""
        from vouch.gate.pending import open_proposals

        for p in open_proposals(self.kb):
            if p.kind not in GATED or not ids.is_object_id(p.object_id):
                continue
            snap = Snapshot(self.kb, p.commit)
            obj = _named(snap.object(p.kind, p.object_id), p.object_id)
            if obj is not None and p.object_id not in self.pending:
                self.pending[p.object_id] = Item(p.kind, obj, p.id, snap)
        self._cache.clear()

    def item(self, object_id: str, likely: str | None = None) -> Item | None:
        """The object with this id, of any kind (`likely` tried first), or None."""
        if object_id in self.pending:
            return self.pending[object_id]
        if object_id in self._cache:
            return self._cache[object_id]
        found = None
        kinds: tuple[str, ...] = ("source",) if ids.is_source_id(object_id) else GATED
        if likely is not None and likely in kinds:
            kinds = (likely, *(k for k in kinds if k != likely))
        for kind in kinds:
            obj = _named(self.snap.object(kind, object_id), object_id)
            if obj is not None:
                found = Item(kind, obj, None, self.snap)
                break
        self._cache[object_id] = found
        return found

    def remember(self, item: Item) -> None:
        oid = str(item.obj["id"])
        if oid not in self.pending:
            self._cache[oid] = item

    def referencing(self, wanted: set[str]) -> list[Item]:
        """The objects naming any of `wanted` (through an evidence span too)."""
        if not wanted:
            return []
        found = self._grep(sorted(wanted))
        spans = {str(i.obj["id"]) for i in found if i.kind == "evidence"}
        if spans:
            found += [i for i in self._grep(sorted(spans)) if i.kind != "evidence"]
        found = [i for i in found if i.kind != "evidence" and str(i.obj["id"]) not in self.pending]
        found += [i for i in self.pending.values() if _names_any(i, wanted, self)]
        out: dict[tuple[str, str], Item] = {}
        for i in found:
            if any(link_touches(lk, wanted) for lk in links(i, self)):
                out.setdefault((i.kind, str(i.obj["id"])), i)
        return [out[k] for k in sorted(out)]

    def _grep(self, needles: list[str]) -> list[Item]:
        kb = self.kb
        start = kb.rel(".") + "/"
        dirs = [kb.rel(k.directory) for n, k in KINDS.items() if n not in ("source", "session")]
        out = []
        for path in grep_paths(kb.repo, needles, dirs, rev=self.commit):
            entry = catalog(path[len(start) :]) if path.startswith(start) else None
            if entry is None or entry.kind not in KINDS or entry.id is None:
                continue
            if entry.kind in ("source", "session"):
                continue
            obj = _named(self.snap.object(entry.kind, entry.id), entry.id)
            if obj is not None:
                item = Item(entry.kind, obj, None, self.snap)
                out.append(item)
                if entry.kind != "evidence":
                    self.remember(item)
        return out

    def every(self, kind: str) -> Iterator[Item]:
        """Every object of a kind on the work tree (the whole branch), pending ones last."""
        for obj in self.kb.iter_objects(KINDS[kind]):
            if str(obj["id"]) not in self.pending:
                item = Item(kind, obj, None, self.snap)
                self.remember(item)
                yield item
        yield from (i for i in self.pending.values() if i.kind == kind)

    def span_source(self, evidence_id: str, snap: Snapshot) -> tuple[str, str | None] | None:
        """(source id, locator) of an evidence span, read where the citing object is."""
        with contextlib.suppress(VouchError, ValueError):
            ev = _named(snap.object("evidence", evidence_id), evidence_id) or _named(
                self.snap.object("evidence", evidence_id), evidence_id
            )
            if ev is not None:
                return str(ev["source_id"]), ev.get("locator")
        return None


def _named(obj: Obj | None, object_id: str) -> Obj | None:
    """The object, if its file holds the id its path names (a branch built by hand can
    put one object's text at another's path: drawn as neither)."""
    return obj if obj is not None and obj.get("id") == object_id else None


def _names_any(item: Item, wanted: set[str], reader: Reader) -> bool:
    return any(link_touches(lk, wanted) for lk in links(item, reader))


def link_touches(link: Link, wanted: set[str]) -> bool:
    return link.source in wanted or link.target in wanted


def _ids(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value] if value else []
    return [str(v) for v in items if isinstance(v, str) and v]


def links(item: Item, reader: Reader) -> list[Link]:
    """The edges one object draws (worked out once per object and reader)."""
    key = (item.kind, str(item.obj.get("id")), item.pending)
    found = reader.drawn.get(key)
    if found is None:
        found = reader.drawn[key] = _draw(item, reader)
    return found


def _draw(item: Item, reader: Reader) -> list[Link]:
    obj, kind, pid = item.obj, item.kind, item.pending
    me = str(obj.get("id"))
    out: list[Link] = []

    def cite(cited: Any) -> None:
        for c in _ids(cited):
            if ids.is_source_id(c):
                out.append(Link(me, c, "cites", pending=pid, named="source"))
                continue
            found = reader.span_source(c, item.snap)
            if found is not None:
                out.append(Link(me, found[0], "cites", note=found[1], pending=pid, named="source"))

    if kind == "claim":
        cite(obj.get("evidence"))
        out += [
            Link(me, e, "about", pending=pid, named="entity") for e in _ids(obj.get("entities"))
        ]
        out += [Link(me, c, "supersedes", pending=pid) for c in _ids(obj.get("supersedes"))]
        out += [Link(c, me, "supersedes", pending=pid) for c in _ids(obj.get("superseded_by"))]
        for c in _ids(obj.get("contradicts")):  # symmetric: one edge per pair
            a, b = sorted((me, c))
            out.append(Link(a, b, "contradicts", pending=pid))
    elif kind == "page":
        out += [Link(me, c, "lists", pending=pid) for c in _ids(obj.get("claims"))]
        out += [
            Link(me, e, "lists", pending=pid, named="entity") for e in _ids(obj.get("entities"))
        ]
        cite(obj.get("sources"))
    elif kind == "relation":
        source, target = str(obj.get("source") or ""), str(obj.get("target") or "")
        if source and target:
            out.append(Link(source, target, str(obj.get("relation")), relation=me, pending=pid))
    return out
