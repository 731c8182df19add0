"""What a proposed object refers to, and where each reference holds.

A reference holds when its object exists on the commit the proposal is checked against
(`BaseView`), or is made with it (evidence from a `<source>:<locator>` pointer), or lands
before it in the same approval (`also`). Otherwise it is either in another open proposal
— the proposal *waits for* that one (linked proposals: proposed together, approved
together, dependencies first) — or it exists nowhere. The messages say which: "does not
exist" or "is pending in proposal P".
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

from vouch.core import ids
from vouch.errors import CorruptFile
from vouch.kinds import KINDS, Obj
from vouch.kinds import evidence as evidence_kind
from vouch.kinds import source as source_kind
from vouch.store.kb import KB

# kinds a relation endpoint may be, in the order they are looked for
ENDPOINT_KINDS = ("claim", "entity", "page", "relation", "evidence", "session")
Pending = Callable[[], Mapping[str, str]]  # object id -> open proposal id, asked lazily


class BaseView:
    """What exists in the proposal's base commit (not the work tree: that may differ)."""

    def __init__(self, kb: KB, commit: str | None):
        self.kb = kb
        self.commit = commit

    def _has(self, rel: str) -> bool:
        if self.commit is None:
            return False
        return self.kb.repo.store.info(f"{self.commit}:{self.kb.rel(rel)}") is not None

    def exists(self, kind: str, object_id: str) -> bool:
        if kind == "source":
            return ids.is_source_id(object_id) and self._has(source_kind.path_for(object_id))
        return ids.is_object_id(object_id) and self._has(KINDS[kind].path_for(object_id))

    def any_kind(self, object_id: str) -> str | None:
        if ids.is_source_id(object_id):
            return "source" if self.exists("source", object_id) else None
        return next((k for k in ENDPOINT_KINDS if self.exists(k, object_id)), None)

    def read(self, rel: str) -> bytes | None:
        return self.kb.committed(self.commit, rel)


def _cited(view: BaseView, item: str, made: Collection[str]) -> str | None:
    """The problem with one citation, or None when it names an existing source/evidence."""
    if ids.is_source_id(item):
        if not view.exists("source", item):
            return f"source {item[:12]}… is not registered"
        if source_kind.redacted_in(view.read, item):
            return f"source {item[:12]}… was redacted by a decision: it cannot be cited"
        return None
    if ids.is_object_id(item):
        if item in made:
            return None
        data = view.read(evidence_kind.path_for(item))
        if data is None:
            return f"evidence {item} does not exist"
        if source_kind.redacted_in(view.read, _source_of(data, item)):
            return f"evidence {item} cites a source a decision redacted: it cannot be cited"
        return None
    return f"evidence item {item!r} is not a source id, evidence id or <source>:<locator>"


def _source_of(data: bytes, item: str) -> str:
    """The source id an evidence file points into ("" when it cannot be read)."""
    try:
        found = evidence_kind.load(data.decode("utf-8"), where=item)
    except (CorruptFile, UnicodeDecodeError):
        return ""  # not loadable: the check of its file names that
    return str(found.get("source_id") or "")


def linked(kind: str, obj: Obj) -> list[tuple[str, str, str | None]]:
    """(label, id, kind or None for any) of every gated object `obj` refers to."""
    out: list[tuple[str, str, str | None]] = []
    if kind == "claim":
        out += [("entity", e, "entity") for e in obj.get("entities") or [] if _is_id(e)]
    elif kind == "relation":
        for end in ("source", "target"):
            value = obj.get(end)
            if isinstance(value, str) and _is_id(value):
                out.append((f"relation {end}", value, None))
    elif kind == "page":
        for field, ref_kind in (("claims", "claim"), ("entities", "entity"), ("sources", "source")):
            out += [(ref_kind, i, ref_kind) for i in obj.get(field) or [] if _is_id(i)]
    return out


def _is_id(value: Any) -> bool:
    return isinstance(value, str) and (ids.is_object_id(value) or ids.is_source_id(value))


def check_references(
    view: BaseView,
    kind: str,
    obj: Obj,
    made: Collection[str],
    require_citations: bool,
    *,
    also: Collection[str] = (),
    pending: Pending | None = None,
    allow_pending: bool = False,
) -> tuple[list[str], dict[str, str]]:
    """(errors, waits): every reference that does not hold, and — with `allow_pending`
    — the ones pending in open proposals instead (object id -> proposal id)."""
    errors: list[str] = []
    waits: dict[str, str] = {}
    if kind in ("claim", "relation"):
        if kind == "claim" and not obj.get("evidence") and require_citations:
            errors.append("evidence must cite at least one existing source or evidence id")
        errors += [e for e in (_cited(view, i, made) for i in obj.get("evidence") or []) if e]
    if kind == "relation" and obj.get("source") and obj.get("source") == obj.get("target"):
        errors.append("a relation cannot point from an object to itself")
    known: Mapping[str, str] | None = None
    for label, object_id, ref_kind in linked(kind, obj):
        if object_id in also:
            continue
        found = view.exists(ref_kind, object_id) if ref_kind else view.any_kind(object_id)
        if found and ref_kind == "source" and source_kind.redacted_in(view.read, object_id):
            errors.append(
                f"{label} {object_id[:12]}… was redacted by a decision: it cannot be cited"
            )
            continue
        if found:
            continue
        if known is None:
            known = pending() if pending is not None else {}
        pid = known.get(object_id) if ref_kind != "source" else None
        if pid is not None and allow_pending:
            waits[object_id] = pid
        elif pid is not None:
            errors.append(f"{label} {object_id} is pending in proposal {pid}")
        else:
            errors.append(f"{label} {object_id} does not exist")
    return errors, waits
