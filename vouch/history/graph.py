"""`vouch graph [ID]`: how entities, relations, claims, pages and the sources they cite
hang together, as nodes and edges.

Around one object the graph is walked breadth-first to `depth` hops, both ways: the ids
an object names (a claim's evidence, entities, supersessions, contradictions; a page's
claims, entities and sources; a relation's two ends), and the objects naming it (found
by one `git grep` per hop, as `vouch impact` finds them). Without an id it is the whole
checked-out branch. Relations are edges between their two ends; an evidence span is
drawn as its source (the edge says the lines). Read from the work tree's knowledge, or
from one commit (`vouch diff --format markdown` draws what a range adds).

Status is shown, never hidden: a superseded, archived or redacted object, and a claim
in a contradiction, is marked; with `pending` (or for an id only an open proposal
holds) the objects open proposals add join, each marked with its proposal. A graph past
`max_nodes` or `max_edges` keeps the nearest nodes (around an id) or the best-connected
clusters (the whole branch) and counts, per kind, what it left out. Read-only.
"""

from __future__ import annotations

import contextlib
from collections import deque
from typing import Any

from vouch.core import ids
from vouch.errors import CorruptFile, InvalidId, NotFound, VouchError
from vouch.history.graph_links import Item, Link, Reader, links
from vouch.kinds import KINDS
from vouch.store.kb import KB

MAX_NODES = 200
MAX_EDGES = 400
FADED = ("superseded", "archived", "redacted")  # drawn dashed
_DASHED_EDGES = ("supersedes", "contradicts")


def _ends(link: Link, of: str) -> str:
    return link.target if link.source == of else link.source


# -- the graph around one object ------------------------------------------------------
def around(
    kb: KB,
    object_id: str,
    *,
    depth: int = 2,
    max_nodes: int = MAX_NODES,
    max_edges: int = MAX_EDGES,
    pending: bool = False,
) -> dict[str, Any]:
    if not (ids.is_object_id(object_id) or ids.is_source_id(object_id)):
        raise InvalidId(f"{object_id!r} is not an object or source id", hint="give an id")
    reader = Reader(kb)
    if pending:
        reader.include_pending()
    seed = reader.item(object_id)
    if seed is None and not pending:  # an id only an open proposal holds: shown pending
        reader.include_pending()
        seed = reader.item(object_id)
        pending = seed is not None
    if seed is None:
        raise NotFound(
            f"no claim, page, entity, relation or source {object_id} here",
            hint="`vouch list` names what is here; `vouch pending` what is proposed",
        )
    order, relations, walked = walk(reader, [object_id], depth, enough=max_nodes)
    out = assemble(reader, order, relations, max_nodes, max_edges)
    if walked < depth:  # the cap was full before the last hops: said, not hidden
        out["omitted"]["hops_not_walked"] = depth - walked
        out["truncated"] = True
    return {"center": object_id, "depth": depth, "pending": pending, **out}


def walk(
    reader: Reader, start: list[str], depth: int, enough: int | None = None
) -> tuple[list[str], dict[str, Item], int]:
    """Node ids breadth-first from `start` to `depth` hops, nearest first, the relations
    met on the way, and the hops walked: once `enough` nodes are found, the next hop is
    not walked (the cap keeps the nearest; what lies further would only be counted)."""
    seen: dict[str, int] = {}
    relations: dict[str, Item] = {}
    frontier: list[str] = []

    def visit(oid: str, level: int, into: list[str]) -> None:
        if oid not in seen:
            seen[oid] = level
            into.append(oid)

    for oid in start:
        item = reader.item(oid)
        if item is not None and item.kind == "relation":  # a relation is its two ends
            relations[oid] = item
            for lk in links(item, reader):
                visit(lk.source, 0, frontier)
                visit(lk.target, 0, frontier)
        else:
            visit(oid, 0, frontier)
    walked = 0
    for level in range(1, depth + 1):
        if enough is not None and len(seen) >= enough:
            break
        walked = level
        reached: list[str] = []
        for oid in frontier:
            item = reader.item(oid)
            for lk in links(item, reader) if item is not None else ():
                end = _ends(lk, oid)
                if lk.named and end == lk.target:
                    reader.item(end, lk.named)  # read as the field's kind first
                visit(end, level, reached)
        wanted = set(frontier)
        for item in reader.referencing(wanted):
            me = str(item.obj["id"])
            if item.kind == "relation":
                relations[me] = item
                for lk in links(item, reader):
                    for end in (lk.source, lk.target):
                        visit(end, level, reached)
            else:
                visit(me, level, reached)
        frontier = reached
        if not frontier:
            walked = depth
            break
    return list(seen), relations, walked


# -- what a range changes ---------------------------------------------------------------
def changes(
    kb: KB,
    commit: str,
    changed: list[tuple[str, str]],
    *,
    max_nodes: int = 60,
    max_edges: int = 120,
) -> dict[str, Any]:
    """The objects a range adds or changes ((id, kind) pairs, read at `commit`) with
    their immediate neighbours (`vouch diff --format markdown` draws it), the changed
    ones marked. The first changes come with their neighbours, then other changes while
    there is room; the rest are counted by kind, not read (a range adding 10k claims
    costs the diff no second reading)."""
    reader = Reader(kb, commit)
    pending = list(dict.fromkeys(changed))
    first: list[str] = []
    while pending and len(first) < max(1, max_nodes // 3):
        oid, kind = pending.pop(0)
        if reader.item(oid, kind) is not None:
            first.append(oid)
    order, relations, _ = walk(reader, first, 1)
    while pending and len(order) < max_nodes:
        oid, kind = pending.pop(0)
        item = reader.item(oid, kind)
        if item is not None and item.kind == "relation":  # an edge, if both ends are drawn
            relations[oid] = item
        elif item is not None and oid not in order:
            order.append(oid)
    out = assemble(reader, order, relations, max_nodes, max_edges)
    left = out["omitted"]["nodes"]
    for _, kind in pending:
        if kind == "relation":
            out["omitted"]["edges"] += 1
        else:
            left[kind] = left.get(kind, 0) + 1
    out["omitted"]["nodes"] = dict(sorted(left.items()))
    if pending:  # the edges of changes never read are not counted: "N+ edges"
        out["omitted"]["more_edges"] = True
    out["truncated"] = out["truncated"] or bool(pending)
    shown = {oid for oid, _ in changed}
    for node in out["nodes"]:
        if node["id"] in shown:
            node["changed"] = True
    return {"center": None, "depth": 1, "pending": False, **out}


# -- the whole branch -------------------------------------------------------------------
def whole(
    kb: KB,
    *,
    max_nodes: int = MAX_NODES,
    max_edges: int = MAX_EDGES,
    pending: bool = False,
) -> dict[str, Any]:
    reader = Reader(kb)
    if pending:
        reader.include_pending()
    items: dict[str, Item] = {}
    relations: dict[str, Item] = {}
    for kind in ("entity", "page", "claim"):
        for item in reader.every(kind):
            items[str(item.obj["id"])] = item
    for item in reader.every("relation"):
        relations[str(item.obj["id"])] = item
    degree: dict[str, int] = {oid: 0 for oid in items}
    neighbours: dict[str, list[str]] = {}
    every_link = {lk._replace(note=None) for i in items.values() for lk in links(i, reader)}
    every_link |= {lk for r in relations.values() for lk in links(r, reader)}
    for lk in every_link:  # (a supersession is named at both ends: counted once)
        for a, b in ((lk.source, lk.target), (lk.target, lk.source)):
            degree[a] = degree.get(a, 0) + 1
            neighbours.setdefault(a, []).append(b)
    # the best-connected clusters first: breadth-first from the busiest node left
    order: list[str] = []
    placed: set[str] = set()
    for hub in sorted(degree, key=lambda o: (-degree[o], o)):
        if hub in placed:
            continue
        queue = deque([hub])
        placed.add(hub)
        while queue:
            oid = queue.popleft()
            order.append(oid)
            for n in sorted(set(neighbours.get(oid, ())), key=lambda o: (-degree.get(o, 0), o)):
                if n not in placed:
                    placed.add(n)
                    queue.append(n)
    out = assemble(reader, order, relations, max_nodes, max_edges)
    return {"center": None, "depth": None, "pending": pending, **out}


# -- nodes, edges and what was left out ---------------------------------------------------
def assemble(
    reader: Reader,
    order: list[str],
    relations: dict[str, Item],
    max_nodes: int,
    max_edges: int,
) -> dict[str, Any]:
    kept = order[:max_nodes]
    keep, known = set(kept), set(order)
    nodes = [_node(reader, oid) for oid in kept]
    left: dict[str, int] = {}
    for oid in order[max_nodes:]:
        kind = _node_kind(reader, oid)
        left[kind] = left.get(kind, 0) + 1
    edges: dict[tuple[str, str, str], dict[str, Any]] = {}
    dropped: set[tuple[str, str, str]] = set()
    # every edge among the nodes found, so what the cap leaves out is counted whole
    drawing = [reader.item(oid) for oid in order] + list(relations.values())
    for item in drawing:
        for lk in links(item, reader) if item is not None else ():
            key = (lk.source, lk.target, lk.relation or lk.kind)
            if lk.source in keep and lk.target in keep:
                if key not in edges:
                    edges[key] = _edge(lk)
            elif lk.source in known and lk.target in known:  # an end the cap left out
                dropped.add(key)
    ordered = [edges[k] for k in sorted(edges)]
    omitted_edges = len(dropped - set(edges)) + max(0, len(ordered) - max_edges)
    contradicted = {e[end] for e in ordered if e["kind"] == "contradicts" for end in ("from", "to")}
    for n in nodes:
        if n["id"] in contradicted:
            n["contradicted"] = True
    counts: dict[str, int] = {}
    for n in nodes:
        counts[n["kind"]] = counts.get(n["kind"], 0) + 1
    return {
        "nodes": nodes,
        "edges": ordered[:max_edges],
        "counts": counts,
        "omitted": {"nodes": dict(sorted(left.items())), "edges": omitted_edges},
        "truncated": bool(left) or omitted_edges > 0,
        "limits": {"max_nodes": max_nodes, "max_edges": max_edges},
    }


def _node_kind(reader: Reader, oid: str) -> str:
    item = reader.item(oid)
    return item.kind if item is not None else "missing"


def _node(reader: Reader, oid: str) -> dict[str, Any]:
    item = reader.item(oid)
    if item is None:  # named, but not here (a dangling id: lint reports it)
        return {"id": oid, "kind": "missing", "title": oid, "status": "missing"}
    out: dict[str, Any] = {"id": oid, "kind": item.kind, "title": _title(item)}
    status = item.obj.get("status")
    if item.kind == "source" and item.obj.get("superseded_by"):
        status = "superseded"
    if status:
        out["status"] = str(status)
    if status in FADED:
        out["faded"] = True
    if item.kind == "claim" and item.obj.get("contradicts"):  # drawn or not, the other one
        out["contradicted"] = True
    if item.pending:
        out["pending"] = item.pending
    return out


def _title(item: Item) -> str:
    with contextlib.suppress(VouchError, ValueError, TypeError, CorruptFile):
        title = KINDS[item.kind].title_of(item.obj)
        if item.kind == "source":
            title = str(item.obj.get("title") or item.obj.get("locator") or title)
        return " ".join(str(title).split())
    return str(item.obj.get("id"))


def _edge(lk: Link) -> dict[str, Any]:
    out: dict[str, Any] = {"from": lk.source, "to": lk.target, "kind": lk.kind}
    if lk.relation:
        out["relation_id"] = lk.relation
    if lk.note:
        out["locator"] = lk.note
    if lk.kind in _DASHED_EDGES:
        out["dashed"] = True
    if lk.pending:
        out["pending"] = lk.pending
    return out
