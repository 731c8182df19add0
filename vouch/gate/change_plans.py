"""What a change proposal writes (`vouch.gate.changes`): the files it edits, creates and
deletes on a given commit, worked out from that commit alone — when it is proposed (to
refuse what cannot land and to name what a deletion touches) and again when it is
approved, on the commit it lands on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vouch.core import ids
from vouch.errors import ValidationFailed, VouchError
from vouch.gate.changes import Change
from vouch.gate.edits import Approved, Branch, retired
from vouch.git.history import grep_paths
from vouch.kinds import GATED, KINDS
from vouch.kinds import claim as claim_kind
from vouch.kinds import page as page_kind
from vouch.kinds.base import REDACTED, REDACTED_HASH
from vouch.store.kb import KB

NOTICE = "[redacted]"  # a redacted claim's text
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


def plan(kb: KB, commit: str, change: Change, *, proposing: bool = False) -> Plan:
    """The change as it would land on `commit`, or ValidationFailed with every reason.
    `proposing`: the objects a deletion unlinks are found, not checked against the ones
    its proposal recorded."""
    branch = Branch(kb, commit)
    knowledge = (claim_kind.KIND, page_kind.KIND) if change.op == "archive" else KNOWLEDGE
    if change.op in ("recite", "redact"):
        knowledge = (claim_kind.KIND,)
    target = branch.find(change.target, f"object to {change.op}", knowledge)
    out = Plan(change)
    if change.op == "recite":
        _recite(branch, target, out)
    elif change.op == "archive":
        _archive(target, out)
    elif change.op == "redact":
        _redact(target, out)
    else:
        _delete(kb, branch, target, out, proposing)
    return out


def _edit(out: Plan, obj: Approved, changes: dict[str, Any], what: str) -> None:
    if "updated_at" in obj.kind.field_names:
        changes = {**changes, "updated_at": ids.now_iso()}
    out.before[obj.path] = obj.text.encode()
    out.files[obj.path] = obj.kind.edit(obj.text, changes, where=obj.path).encode()
    out.edited.append({"kind": obj.kind.name, "id": obj.id, "what": what})


def _refuse(problems: list[str]) -> None:
    if problems:
        raise ValidationFailed(problems, what="change")


def _recite(branch: Branch, target: Approved, out: Plan) -> None:
    from vouch.gate.lifecycle import citation

    change = out.change
    why = retired(target)
    _refuse([f"claim {target.id} is {why}: nothing to re-cite"] if why else [])
    held = target.ids_in("evidence")
    _refuse([f"claim {target.id} does not cite {d}" for d in change.drop if d not in held])
    assert change.evidence is not None
    cited, made = citation(branch, change.evidence)
    kept = [e for e in held if e not in change.drop]
    _refuse(
        [f"claim {target.id} already cites {cited}"] if cited in kept else [],
    )
    out.files.update(made)
    out.made = [cited] if made else []
    out.cited = cited
    out.evidence = change.evidence
    _edit(out, target, {"evidence": [*kept, cited]}, f"cites {cited}")


def _archive(target: Approved, out: Plan) -> None:
    if target.kind is claim_kind.KIND:
        why = retired(target)
        _refuse([f"claim {target.id} is {why}: it is already out of use"] if why else [])
    _refuse(
        [f"{target.kind.name} {target.id} is already archived"]
        if target.status == "archived"
        else []
    )
    _edit(out, target, {"status": "archived"}, "archived")


def _redact(target: Approved, out: Plan) -> None:
    """The claim's words go: a new file (the old one's comments may hold them too) with
    the notice for text, no citations or tags, and the digest its id was made from."""
    _refuse([f"claim {target.id} is already redacted"] if target.status == REDACTED else [])
    kind = target.kind
    obj = dict(target.obj)
    digest = ids.sha256_hex(ids.canonical_json(kind.identity_of(obj)))
    obj.update(
        {
            "text": NOTICE,
            "status": REDACTED,
            REDACTED_HASH: digest,
            "evidence": [],
            "tags": [],
            "updated_at": ids.now_iso(),
        }
    )
    obj = {k: v for k, v in obj.items() if v not in (None, [])}
    out.before[target.path] = target.text.encode()
    out.files[target.path] = kind.dump(kind.normalize(obj)).encode()
    out.edited.append({"kind": kind.name, "id": target.id, "what": "redacted"})


# -- delete ----------------------------------------------------------------------------------
def _delete(kb: KB, branch: Branch, target: Approved, out: Plan, proposing: bool) -> None:
    """The target's file goes, and each object in `also`; every other object naming one
    of them in a list is unlinked; one that names it where it cannot do without it (a
    relation's end, a claim's replacement) must be in `also`."""
    change = out.change
    going: dict[str, Approved] = {target.id: target}
    problems: list[str] = []
    for oid in change.also:
        try:
            going[oid] = branch.find(oid, "object deleted with it", KNOWLEDGE)
        except VouchError as exc:  # not approved here, not an id
            problems.append(exc.message)
    _refuse(problems)
    unlink: dict[str, tuple[Approved, dict[str, list[str]]]] = {}
    for ref in _naming(kb, branch, sorted(going)):
        obj, field_name, value = ref
        if obj.id in going:
            continue
        if isinstance(value, list):
            entry = unlink.setdefault(obj.id, (obj, {}))
            current = entry[1].get(field_name, obj.ids_in(field_name))
            entry[1][field_name] = [v for v in current if v not in going]
        else:
            problems.append(
                f"{obj.kind.name} {obj.id} names {value} as its {field_name}: "
                f"delete it too (--also {obj.id}) or change it first"
            )
    _refuse(problems)
    more = sorted(set(unlink) - set(change.unlink))
    if more and not proposing:
        _refuse(
            [
                f"since this deletion was proposed, {', '.join(more)} came to name what it "
                "deletes: it would change objects nobody reviewed"
            ]
        )
    for obj in going.values():
        out.before[obj.path] = obj.text.encode()
        out.files[obj.path] = None
        out.edited.append({"kind": obj.kind.name, "id": obj.id, "what": "deleted"})
    for oid in sorted(unlink):
        obj, fields = unlink[oid]
        _edit(out, obj, {k: v for k, v in fields.items()}, "no longer names " + ", ".join(going))
    out.unlinked = tuple(sorted(unlink))


def _naming(
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
