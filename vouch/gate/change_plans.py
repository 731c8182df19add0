"""What a change proposal writes (`vouch.gate.changes`): the files it edits, creates and
deletes on a given commit, worked out from that commit alone — when it is proposed (to
refuse what cannot land and to name what a deletion touches) and again when it is
approved, on the commit it lands on.
"""

from __future__ import annotations

from vouch.core import ids
from vouch.errors import ValidationFailed, VouchError
from vouch.gate import source_redaction
from vouch.gate.change_files import KNOWLEDGE, Plan, edit, naming
from vouch.gate.changes import Change
from vouch.gate.edits import Approved, Branch, retired
from vouch.kinds import claim as claim_kind
from vouch.kinds import page as page_kind
from vouch.kinds.base import REDACTED, REDACTED_HASH, redacted
from vouch.store.kb import KB

NOTICE = "[redacted]"  # a redacted claim's text


def plan(kb: KB, commit: str, change: Change, *, proposing: bool = False) -> Plan:
    """The change as it would land on `commit`, or ValidationFailed with every reason.
    `proposing`: the objects a deletion unlinks are found, not checked against the ones
    its proposal recorded."""
    branch = Branch(kb, commit)
    out = Plan(change)
    if change.op == "redact" and ids.is_source_id(change.target):
        source_redaction.plan(kb, branch, change.target, out)
    else:
        _object(kb, branch, change, out)
    # a deletion unlinks, a source's redaction re-points, the objects that name it: the
    # ones its proposal recorded (the reviewer saw them), never one that came since
    more = sorted(set(out.unlinked) - set(change.unlink))
    if more and not proposing:
        _refuse(
            [
                f"since this {change.op} was proposed, {', '.join(more)} came to name "
                f"{change.target}: it would change objects nobody reviewed"
            ]
        )
    return out


def _object(kb: KB, branch: Branch, change: Change, out: Plan) -> None:
    """The plan of a change of an approved claim, page, entity or relation."""
    knowledge = (claim_kind.KIND, page_kind.KIND) if change.op == "archive" else KNOWLEDGE
    if change.op == "recite":
        knowledge = (claim_kind.KIND,)
    elif change.op == "redact":
        knowledge = tuple(k for k in KNOWLEDGE if k.name in WORDS)
    target = branch.find(change.target, f"object to {change.op}", knowledge)
    if change.op == "recite":
        _recite(branch, target, out)
    elif change.op == "archive":
        _archive(target, out)
    elif change.op == "redact":
        _redact(target, out)
    else:
        _delete(kb, branch, target, out)


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
    edit(out, target, {"evidence": [*kept, cited]}, f"cites {cited}")


def _archive(target: Approved, out: Plan) -> None:
    if target.kind is claim_kind.KIND:
        why = retired(target)
        _refuse([f"claim {target.id} is {why}: it is already out of use"] if why else [])
    _refuse(
        [f"{target.kind.name} {target.id} is already archived"]
        if target.status == "archived"
        else []
    )
    edit(out, target, {"status": "archived"}, "archived")


# what a redaction takes from each kind: its words become the notice, these lists and
# fields go (a claim's citations and tags, a page's sources, an entity's aliases)
WORDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "claim": (("text",), ("evidence", "tags")),
    "page": (("title", "body"), ("sources", "tags")),
    "entity": (("name",), ("aliases", "description", "tags")),
}


def _redact(target: Approved, out: Plan) -> None:
    """The object's words go: a new file (the old one's comments may hold them too) with
    the notice for its text, none of its citations or tags, and the digest its id was
    made from (`redacted_hash`; status `redacted` where the kind has one)."""
    kind = target.kind
    _refuse([f"{kind.name} {target.id} is already redacted"] if redacted(kind, target.obj) else [])
    words, dropped = WORDS[kind.name]
    obj = dict(target.obj)
    digest = ids.sha256_hex(ids.canonical_json(kind.identity_of(obj)))
    obj.update({name: NOTICE for name in words})
    obj.update({name: None for name in dropped})
    obj[REDACTED_HASH] = digest
    if "status" in kind.field_names:
        obj["status"] = REDACTED
    if "updated_at" in kind.field_names:
        obj["updated_at"] = ids.now_iso()
    obj = {k: v for k, v in obj.items() if v not in (None, [])}
    out.before[target.path] = target.text.encode()
    out.files[target.path] = kind.dump(kind.normalize(obj)).encode()
    out.edited.append({"kind": kind.name, "id": target.id, "what": "redacted"})


# -- delete ----------------------------------------------------------------------------------
def _delete(kb: KB, branch: Branch, target: Approved, out: Plan) -> None:
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
    for ref in naming(kb, branch, sorted(going)):
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
    for obj in going.values():
        out.before[obj.path] = obj.text.encode()
        out.files[obj.path] = None
        out.edited.append({"kind": obj.kind.name, "id": obj.id, "what": "deleted"})
    for oid in sorted(unlink):
        obj, fields = unlink[oid]
        edit(out, obj, {k: v for k, v in fields.items()}, "no longer names " + ", ".join(going))
    out.unlinked = tuple(sorted(unlink))
