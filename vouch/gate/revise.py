"""Revisions and review comments: a proposal stays open while it is discussed and fixed.

A revision is one more commit on the proposal branch, made by the proposer only: its
tree is the proposal's base tree plus the revised object (at the id its new content
hashes to) and the evidence it makes — exactly what proposing it afresh would add — and
its parent is the previous revision, so the branch keeps the whole review history.
Trailers carry the same proposal id, proposer and base, and `Vouch-Revision: N`.
`verify` checks every revision commit and lands only the last one's files; a reviewer's
`vouch show` pins the revision shown (refs/vouch/reviewed/<id>), so approve refuses a
proposal revised after it was reviewed.

A comment is a commit with the empty tree on `refs/vouch/comments/<proposal-id>` (one
chain per proposal, pushed and fetched like any ref): it never touches the proposal
branch, so it changes nothing a reviewer approves. Its trailers name the author and the
revision commit it was written against.
"""

from __future__ import annotations

from typing import Any

from vouch.core import ids
from vouch.errors import CorruptFile, GateRefused, UsageError
from vouch.gate import bases, records
from vouch.gate.identity import Identity, principal, same
from vouch.gate.propose import BaseView, proposal_message, proposal_tree, validate_values
from vouch.gate.thread import COMMENTS_PREFIX
from vouch.kinds import KINDS
from vouch.kinds import evidence as evidence_kind
from vouch.store.kb import KB, PROPOSAL_PREFIX
from vouch.store.recovery import gate_lock

# what `kb.revise_proposal` may change, by kind
REVISABLE = {
    "claim": ("text", "evidence", "confidence", "type", "tags", "entities"),
    "page": ("title", "body", "type", "claims", "entities", "sources", "tags"),
    "entity": ("name", "type", "aliases", "description"),
    "relation": ("relation", "confidence", "evidence"),
}
# fields a revision recomputes rather than keeps
_DERIVED = ("id", "approved_by")  # updated_at is kept until the content changes


def revise(
    kb: KB,
    actor: str | Identity,
    proposal_id: str,
    changes: dict[str, Any],
    rationale: str | None = None,
) -> dict[str, Any]:
    """Add a revision to an open proposal. Result: proposal_id, revision, commit,
    <kind>_id, valid, errors (an invalid revision writes nothing), changed."""
    who = principal(kb, actor)
    with gate_lock(kb):
        proposal = records.find(kb, proposal_id)
        if not proposal.local:
            raise UsageError(
                f"proposal {proposal.id} is not a branch of this clone",
                hint="revise it where it was proposed (its proposer's clone), then push",
            )
        if not same(who, Identity(proposal.proposer, proposal.proposer_email)):
            raise GateRefused(
                f"only its proposer ({proposal.proposer}) revises proposal {proposal.id}",
                hint=f'ask for the change instead: vouch comment {proposal.id} "..."',
            )
        kind = KINDS[proposal.kind]
        allowed = REVISABLE.get(proposal.kind, ())
        given = {k: v for k, v in changes.items() if v is not None}
        unknown = sorted(set(given) - set(allowed))
        if unknown:
            raise UsageError(
                f"a {proposal.kind} revision cannot change {', '.join(unknown)}",
                hint="it may change: " + ", ".join(allowed),
            )
        if not given and rationale is None:
            raise UsageError("a revision needs at least one change", hint="e.g. --text ...")
        repo = kb.repo
        if not proposal.base_commit:  # not a commit id: vouch did not make it
            raise GateRefused(
                f"proposal {proposal.id} names no base commit; vouch revises only what it proposed",
                hint=f"delete it (git branch -D vouch/proposal/{proposal.id}) and propose again",
            )
        # the base branch's tip, only when it is one a decision may land on (`bases`)
        base_tip = repo.peek(proposal.base) if bases.problem(kb, proposal) is None else None
        view = BaseView(kb, base_tip or proposal.base_commit)
        current = _current_object(kb, proposal)
        values = {k: v for k, v in current.items() if k not in _DERIVED}
        if isinstance(values.get("evidence"), list):
            # evidence the proposal made is made again from its pointer
            values["evidence"] = [_pointer(kb, proposal, view, i) for i in values["evidence"]]
        values.update(given)
        if "tags" in given:
            values["tags"] = sorted(set(given["tags"])) or None
        obj, made, errors, waits = validate_values(kb, view, kind, values)
        key = f"{proposal.kind}_id"
        if errors:
            return {"proposal_id": proposal.id, key: obj["id"], "valid": False, "errors": errors}
        if obj["id"] != proposal.object_id and view.exists(proposal.kind, obj["id"]):
            return {
                "proposal_id": proposal.id,
                key: obj["id"],
                "valid": False,
                "errors": [f"{proposal.kind} {obj['id']} is already approved"],
            }
        tree = proposal_tree(kb, kind, obj, made, proposal.base_commit)
        unchanged = tree == repo.store.peel_tree(proposal.commit)
        if not unchanged and "updated_at" in kind.field_names:
            obj = {**obj, "updated_at": ids.now_iso()}  # a real change: stamped now
            tree = proposal_tree(kb, kind, obj, made, proposal.base_commit)
        if unchanged and rationale is None:
            return {
                "proposal_id": proposal.id,
                key: obj["id"],
                "valid": True,
                "errors": [],
                "changed": False,
                "revision": records.revision_of(proposal),
                "commit": proposal.commit,
            }
        number = records.revision_of(proposal) + 1
        message = proposal_message(
            kind,
            obj,
            proposal.id,
            proposal.proposer,
            proposal.base,
            proposal.base_commit,
            rationale if rationale is not None else proposal.rationale,
            proposal.session_id,
            waits,
            revision=number,
            label=proposal.label,
        )
        author = (proposal.proposer, proposal.proposer_email)
        commit = repo.write_commit(tree, [proposal.commit], message, author=author)
        repo.update_ref(
            PROPOSAL_PREFIX + proposal.id,
            commit,
            proposal.commit,
            message=f"vouch: revise {proposal.id}",
        )
    return {
        "proposal_id": proposal.id,
        key: obj["id"],
        "valid": True,
        "errors": [],
        "changed": True,
        "revision": number,
        "commit": commit,
        "waits_for": [{"id": o, "proposal_id": p} for o, p in waits.items()],
    }


def _current_object(kb: KB, proposal: records.Proposal) -> dict[str, Any]:
    obj = records.object_of(kb, proposal)
    if obj is None:
        raise GateRefused(
            f"proposal {proposal.id} does not hold a readable {proposal.kind}",
            hint=f"reject it: vouch reject {proposal.id} --reason ...",
        )
    return obj


def _pointer(kb: KB, proposal: records.Proposal, view: BaseView, item: Any) -> Any:
    """An evidence id the proposal itself made, as the `<source>:<locator>` it came from."""
    if not isinstance(item, str) or not ids.is_object_id(item) or view.exists("evidence", item):
        return item
    path = kb.rel(evidence_kind.path_for(item))
    found = kb.repo.store.read(f"{proposal.commit}:{path}")
    if not found or found[0] != "blob":
        return item
    try:
        ev = evidence_kind.load(found[1].decode("utf-8"), where=path)
    except (CorruptFile, UnicodeDecodeError):
        return item
    return f"{ev['source_id']}:{ev['locator']}"


def comment(kb: KB, actor: str | Identity, proposal_id: str, text: str) -> dict[str, Any]:
    """Add a review comment to an open proposal (its thread ref; the branch is not
    touched). Result: proposal_id, comment (its commit), revision_commit. An agent's
    comment is authored under its reserved address, committed by its operator."""
    if not isinstance(text, str) or not text.strip():
        raise UsageError("a comment needs text")
    who = principal(kb, actor)
    with gate_lock(kb):
        proposal = records.find(kb, proposal_id)
        repo = kb.repo
        ref = COMMENTS_PREFIX + proposal.id
        previous = repo.peek(ref)
        message = records.message(
            f"vouch: comment on {proposal.id}",
            text,
            {
                "Vouch-Proposal": proposal.id,
                "Vouch-Commenter": who.name,
                "Vouch-Revision-Commit": proposal.commit,
            },
        )
        author = (who.name, who.email) if who.agent else None
        made = repo.write_commit(
            repo.empty_tree, [previous] if previous else [], message, author=author
        )
        repo.update_ref(ref, made, previous, message=f"vouch: comment on {proposal.id}")
    return {"ok": True, "proposal_id": proposal.id, "comment": made, "revision": proposal.commit}
