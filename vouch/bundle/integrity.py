"""Would an import leave knowledge that lint refuses? The rules between objects, checked
on the branch as the import would leave it, before anything is written.

`content` checks each file of a bundle on its own. A bundle that passed can still be a
part of a knowledge base — a claim without the evidence it cites, a relation whose end
is missing, a page naming claims that are not there — or knowledge that never went
through review: a claim with no approved decision record, or one its proposer approved.
Landing it would make approved knowledge that `vouch lint` calls broken, which the gate
never writes. So each object the import would land is checked, as lint checks it, on a
view of the target commit with the landing files laid over it: its references resolve
(in the bundle or here), each evidence's span lies in its source and quotes it, the
links between claims hold, and each claim, entity, relation and page has an approved
decision record (the bundle's or this repository's) by someone other than its
proposer, as this repository's committed configuration asks; and no record of the
bundle decides a proposal that is open or rejected here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from vouch.core import ids
from vouch.core.config import Config
from vouch.health import files, provenance, rules
from vouch.health.issues import ERROR, Issue, error, ordered
from vouch.kinds import GATED, KINDS
from vouch.kinds.source import CONTENT_NAMES
from vouch.store.kb import DECIDED_DIR, KB, PROPOSAL_PREFIX


class _Landed(files.View):
    """The files of a commit (blob ids) with the landing files (bytes) laid over them."""

    name = "the branch after the import"

    def __init__(self, kb: KB, here: Mapping[str, str], landing: Mapping[str, bytes]):
        super().__init__(kb, {**here, **dict.fromkeys(landing)})
        self.landing = landing

    def read(self, rel: str) -> bytes | None:
        if rel in self.landing:
            return self.landing[rel]
        return super().read(rel)


def problems(
    kb: KB,
    here: Mapping[str, str],
    landing: Mapping[str, bytes],
    settings: Config,
    parsed: Mapping[str, rules.Obj] | None = None,
) -> list[str]:
    """Each rule lint would find broken by landing `landing` (`.vouch/`-relative path ->
    bytes) on the commit whose knowledge files are `here` (path -> blob id): one line
    per problem, naming the file. `parsed`: the objects the bundle check already parsed
    from those bytes (by path), not parsed again."""
    parsed = parsed or {}
    k = rules.Knowledge(_Landed(kb, here, landing))
    require = settings.get("review.require_citations", True) is not False
    issues: list[Issue] = []
    claims: list[str] = []
    gated: list[tuple[str, str]] = []
    records: list[rules.Obj] = []
    for rel in sorted(landing):
        entry = files.catalog(rel)
        if entry is None or entry.kind is None or entry.part == "content":
            continue
        obj = _known(k, entry, landing[rel], parsed.get(rel))
        if obj is None:
            continue
        if entry.kind == files.DECISION:
            records.append(obj)
            continue
        issues += rules.check_object(k, entry.kind, obj, require_citations=require)
        if entry.kind == "claim":
            claims.append(str(obj["id"]))
        if entry.kind in GATED:
            gated.append((entry.kind, str(obj["id"])))
        if entry.kind == "evidence":
            issues += _span(k, obj)
    issues += rules.check_links(k, claims, complete=False)
    issues += provenance.self_approvals(k, records, settings)
    issues += _undecided(k, gated, records, here)
    issues += _deciding_ours(k, records)
    return [
        f"{i['path'] or i['id']}: {i['message']}" for i in ordered(issues) if i["severity"] == ERROR
    ]


def _known(
    k: rules.Knowledge, entry: files.Entry, data: bytes, parsed: rules.Obj | None
) -> rules.Obj | None:
    """A landing file's object — as the bundle's check parsed it, else parsed now — handed
    to `k` as loaded: that check (`content`) validated it and its id already, which
    `k.load` would repeat."""
    assert entry.kind is not None and entry.id is not None
    kind = KINDS.get(entry.kind)  # None for a decision record
    obj = parsed if parsed is not None else files.parse(kind, data, entry.rel).data
    key = (entry.kind, entry.id)
    k.rels[key] = entry.rel
    k.objects[key] = obj
    return obj


def _undecided(
    k: rules.Knowledge,
    gated: list[tuple[str, str]],
    records: Iterable[rules.Obj],
    here: Mapping[str, str],
) -> list[Issue]:
    """The landing knowledge no approved decision record names: the bundle's records
    first, this repository's only when some object is still without one."""
    approved = provenance.approved_objects(records)
    missing = [(kind, oid) for kind, oid in gated if oid not in approved]
    if missing:
        approved.update(provenance.approved_objects(_records_here(k, here)))
    return [
        error(
            "no-decision",
            f"this {kind} has no approved decision record, in the bundle or here: it "
            "did not go through review",
            id=oid,
            path=rules.object_path(k, kind, oid),
        )
        for kind, oid in missing
        if oid not in approved
    ]


def _span(k: rules.Knowledge, obj: rules.Obj) -> list[Issue]:
    """Evidence `vouch evidence add` would make from its source's bytes: the span
    inside the source, the quote found there. A bundle's evidence is otherwise only its
    own word about what a source says. (Its `hash` is not compared: nothing reads it,
    and knowledge bases made by other means than `evidence add` differ there.)"""
    from vouch.store import evidence

    sid = str(obj["source_id"])
    folder = f"sources/{ids.shard(sid)}/{sid}/"
    content = next(
        (k.view.read(folder + n) for n in sorted(CONTENT_NAMES) if folder + n in k.view.listing),
        None,
    )
    if content is None:
        return []  # a missing source is a dangling reference, reported as such
    _, errors = evidence.make(sid, str(obj["locator"]), obj.get("quote"), content)
    where = rules.object_path(k, "evidence", str(obj["id"]))
    return [error("evidence", problem, id=str(obj["id"]), path=where) for problem in errors]


def _deciding_ours(k: rules.Knowledge, records: Iterable[rules.Obj]) -> list[Issue]:
    """Decision records of the bundle for proposals that are open or rejected here: a
    bundle never decides a proposal of this repository (its record would hide the
    branch from `vouch pending` and make `vouch approve` refuse it as decided)."""
    from vouch.gate.records import REJECTED_PREFIX

    repo = k.view.kb.repo
    ours: dict[str, str] = {}  # proposal id -> open or rejected (one for-each-ref each)
    for prefix, state in ((REJECTED_PREFIX, "rejected"), (PROPOSAL_PREFIX, "open")):
        for (ref,) in repo.for_each_ref(prefix, ["refname"]):
            ours[ref[len(prefix) :]] = state
    return [
        error(
            "decided-elsewhere",
            f"decides proposal {pid}, which is {ours[pid]} here: decide it here "
            "(`vouch approve` or `vouch reject`), not by importing a record",
            id=pid,
            path=rules.object_path(k, files.DECISION, pid),
        )
        for pid in (str(r["proposal_id"]) for r in records)
        if pid in ours
    ]


def _records_here(k: rules.Knowledge, here: Mapping[str, str]) -> list[rules.Obj]:
    rels = [rel for rel in sorted(here) if rel.startswith(f"{DECIDED_DIR}/")]
    out = []
    for rel, data in zip(rels, k.view.kb.repo.read_blobs([here[r] for r in rels]), strict=True):
        record = files.parse(None, data, rel).data
        if isinstance(record, dict) and all(
            isinstance(record.get(f), str) for f in rules.DECISION_FIELDS
        ):
            out.append(record)
    return out
