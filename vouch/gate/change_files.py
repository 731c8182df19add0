"""The files a change proposal writes (`vouch.gate.change_plans`), and the two steps
every kind of change shares: editing an approved object's fields, and finding what names
given ids."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vouch.core import ids
from vouch.gate.changes import Change
from vouch.gate.edits import Approved, Branch
from vouch.git.history import grep_paths
from vouch.kinds import GATED, KINDS
from vouch.store.kb import KB

KNOWLEDGE = tuple(KINDS[name] for name in GATED)


@dataclass
class Plan:
    """The files a change writes (`.vouch/`-relative; None deletes), with what it reads."""

    change: Change
    files: dict[str, bytes | None] = field(default_factory=dict)
    before: dict[str, bytes] = field(default_factory=dict)  # the edited files' bytes
    edited: list[dict[str, str]] = field(default_factory=list)  # {kind, id, what}
    evidence: str | None = None
    unlinked: tuple[str, ...] = ()
    made: list[str] = field(default_factory=list)  # evidence ids it creates
    cited: str | None = None  # recite: the citation it adds

    def touched(self) -> list[dict[str, str]]:
        return list(self.edited)

    def object_ids(self) -> list[str]:
        return list(dict.fromkeys(e["id"] for e in self.edited))


def edit(out: Plan, obj: Approved, changes: dict[str, Any], what: str) -> None:
    if "updated_at" in obj.kind.field_names:
        changes = {**changes, "updated_at": ids.now_iso()}
    out.before[obj.path] = obj.text.encode()
    out.files[obj.path] = obj.kind.edit(obj.text, changes, where=obj.path).encode()
    out.edited.append({"kind": obj.kind.name, "id": obj.id, "what": what})


def naming(
    kb: KB, branch: Branch, wanted: list[str]
) -> list[tuple[Approved, str, str | list[str]]]:
    """(object, field, value) for each knowledge object on the branch whose id field
    names one of `wanted`."""
    if branch.tip is None:
        return []
    by_dir = {kb.rel(k.directory) + "/": k for k in KNOWLEDGE}
    out = []
    for path in grep_paths(kb.repo, wanted, list(by_dir), rev=branch.tip):
        top, _, name = path.rpartition("/")
        kind = next((k for d, k in by_dir.items() if path.startswith(d)), None)
        oid = name.removesuffix(kind.ext) if kind else ""
        if kind is None or not ids.is_object_id(oid) or top + "/" + name != path:
            continue
        if path != kb.rel(kind.path_for(oid)):
            continue
        obj = branch.load(kind, oid)
        if obj is None:
            continue
        out += [(obj, name, value) for name, value, _ in kind.naming(obj.obj, wanted)]
    return out
