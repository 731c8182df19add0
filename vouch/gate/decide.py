"""Approve and reject: the two ways a proposal ends (what a decision commit holds:
`vouch.gate.decision_commit`).

Approve checks the proposal (`verify`: exactly what vouch proposes, the commit the
reviewer saw), then lands one merge commit on the base branch whose tree is the tip's
plus the checked files, with `approved_by` set on the object, `decided/<hh>/<id>.yaml`
and the audit events. Nothing from the proposal's tree is taken unchecked, so the merge
is computed in-process; the user's staged, unstaged and untracked work stays as it was.
Reject commits the decision record and keeps the proposal commit under
`refs/vouch/rejected/<id>`. A proposal that someone merged with git itself (or a host's
merge button) is recognised: approve records the decision afterwards, reject refuses.

The gate's settings (`review.*`) are read from the configuration committed on the
target branch, never from the work tree. Every decision commit records the audit
chain's head (`Vouch-Audit-Head`), so `vouch audit --verify` detects dropped or
rewritten events.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vouch.core import ids
from vouch.core.config import Config
from vouch.errors import GateRefused, UsageError
from vouch.gate import (
    bases,
    change_landing,
    committed,
    deciders,
    decision_commit,
    hands,
    linked,
    pending,
    pins,
    records,
    seals,
    verify,
)
from vouch.gate import changes as gate_changes
from vouch.gate.identity import Identity, principal
from vouch.gate.records import Proposal
from vouch.kinds import KINDS
from vouch.store.kb import KB
from vouch.store.landing import RefUpdate, checked_out_branch, fault, land
from vouch.store.recovery import gate_lock

TRUSTED_ROLE = deciders.TRUSTED_ROLE


def _decided_check(kb: KB, proposal: Proposal, tip: str) -> None:
    decision = records.decision_of(kb, proposal.id, tip)
    if decision or kb.repo.peek(records.REJECTED_PREFIX + proposal.id):
        raise records.refuse_decided(proposal.id, decision)


def approve(
    kb: KB,
    actor: str | Identity,
    proposal_id: str,
    reason: str | None = None,
    *,
    expect: str | None = None,
    together: list[str] | tuple[str, ...] = (),
) -> dict[str, Any]:
    """Approve one proposal, or several `together` (linked proposals): each is checked
    on the commit that already holds the ones before it, dependencies first, and all
    land in one ref update — or none does. A proposal that waits for one outside the
    set is refused, naming it. Each must be pinned (`pins`) and decided by someone
    other than its proposer (`deciders`)."""
    repo = kb.repo
    who = principal(kb, actor)
    wanted = list(dict.fromkeys([proposal_id, *together]))
    if expect is not None and len(wanted) > 1:
        raise UsageError(
            "--expect pins one proposal", hint="approve it alone, or review each with show"
        )
    with gate_lock(kb):
        proposals = [records.find(kb, pid) for pid in wanted]
        current = checked_out_branch(kb)
        branch, tip = bases.target(kb, proposals[0])
        for other in proposals[1:]:
            if bases.target(kb, other)[0] != branch:
                raise UsageError(
                    f"proposals {proposals[0].id} and {other.id} land on different branches",
                    hint="approve them one branch at a time",
                )
        settings = committed.settings_at(kb, tip)
        selfs: dict[str, bool] = {}
        for proposal in proposals:
            # the approver named, and the git identity that will commit the decision
            selfs[proposal.id] = deciders.check(who, proposal, settings) or hands.check(
                kb, proposal, settings
            )
            _decided_check(kb, proposal, tip)
        merged = [p for p in proposals if repo.is_ancestor(p.commit, tip)]
        # a change proposal merged by git changed nothing: it is decided as if it was not
        merged = [p for p in merged if not gate_changes.is_change(p)]
        if len(proposals) == 1 and merged:
            proposal = proposals[0]
            dropped = pins.pinned(kb, proposal, expect)
            if proposal.local:
                dropped.append((proposal.ref, None, proposal.commit))
            return _record_merged(
                kb, proposal, who, reason, branch, tip, dropped, current, selfs[proposal.id]
            )
        if merged:
            raise GateRefused(
                f"proposal {merged[0].id} was merged outside vouch",
                hint=f"record its decision alone first: vouch approve {merged[0].id}",
            )
        ordered = linked.dependencies_first(kb, proposals)
        others: list[RefUpdate] = []
        for proposal in ordered:
            others += pins.pinned(kb, proposal, expect)
            if proposal.local:
                others.append((proposal.ref, None, proposal.commit))
        open_objects = linked.lazy_open_objects(kb)
        changes: dict[str, str | None] = {}
        running = tip
        results = []
        for proposal in ordered:
            linked.refuse_waiting(kb, proposal, running, open_objects)
            running, step = _merge_one(
                kb,
                who,
                proposal,
                reason,
                branch,
                running,
                settings,
                open_objects,
                selfs[proposal.id],
            )
            changes.update(step)
            results.append(_approved(proposal, running))
        fault("committed")
        land(
            kb,
            branch,
            tip,
            running,
            changes,
            others,
            message="vouch: approve " + " ".join(p.id for p in ordered),
            current=current,
        )
    if len(results) == 1:
        return results[0]
    first = next(r for r in results if r["proposal_id"] == proposal_id)
    return {**first, "approved": results}


def _merge_one(
    kb: KB,
    who: Identity,
    proposal: Proposal,
    reason: str | None,
    branch: str,
    tip: str,
    settings: Config,
    open_objects: Callable[[], dict[str, str]],
    self_approved: bool,
) -> tuple[str, dict[str, str | None]]:
    """The merge commit that lands one checked proposal on `tip`, and what it changes.
    A signed decision whose key signed the proposal is a self-approval too: refused, or
    (when allowed) made again saying so."""
    if gate_changes.is_change(proposal):
        return change_landing.land(kb, who, proposal, reason, tip, settings, self_approved)
    repo = kb.repo
    actor = who.name
    kind = KINDS.get(proposal.kind)
    obj_path = kb.rel(kind.path_for(proposal.object_id)) if kind else ""
    if kind and ids.is_object_id(proposal.object_id) and repo.blob_at(tip, obj_path):
        # e.g. the same claim proposed in two clones, one already approved
        raise GateRefused(
            f"{proposal.kind} {proposal.object_id} is already approved "
            f"on {branch.removeprefix('refs/heads/')}",
            hint=f"reject this proposal: vouch reject {proposal.id} --reason duplicate",
        )
    checked = verify.check(
        kb,
        proposal,
        tip,
        require_citations=settings.get("review.require_citations", True) is not False,
        pending=open_objects,
    )
    fault("merged")
    changes: dict[str, str | None] = {
        p: b for p, b in checked.files.items() if repo.blob_at(tip, p) != b
    }
    edited = decision_commit.with_approver(checked.kind, checked.text, actor, obj_path)
    changes[obj_path] = repo.write_blob(edited.encode())
    base = dict(changes)
    while True:
        changes = dict(base)
        changes[kb.rel(records.decided_path(proposal.id))] = repo.write_blob(
            decision_commit.record(
                proposal,
                "approved",
                actor,
                reason,
                people=deciders.record_fields(proposal, who, self_approved),
                blobs=seals.landed(kb, base),
            )
        )
        data = {"reason": reason or "", **deciders.event_fields(who, self_approved)}
        logs, chain = decision_commit.logs(
            kb, tip, decision_commit.events(proposal, "proposal.approve", actor, data)
        )
        changes.update(logs)
        final = repo.edit_tree(repo.store.peel_tree(tip), changes)
        trailers = deciders.trailers(who, self_approved)
        message = decision_commit.message(
            proposal, "approved", actor, reason or "", chain, extra=trailers
        )
        commit = repo.write_commit(
            final, [tip, proposal.commit], message, author=decision_commit.author(who)
        )
        keyed = deciders.check_keys(kb, commit, proposal, settings, self_approved)
        if keyed == self_approved:
            return commit, changes
        self_approved = keyed


def _approved(proposal: Proposal, commit: str) -> dict[str, Any]:
    """kb.approve's result: the spec's fields plus the commits involved (and, for a
    change proposal, the change: `recite`, `archive`, `redact`, `delete`)."""
    out = {
        "ok": True,
        "object_id": proposal.object_id,
        "object_kind": proposal.kind,
        "proposal_id": proposal.id,
        "commit": commit,
        "proposal_commit": proposal.commit,
    }
    if gate_changes.is_change(proposal):
        out["change"] = gate_changes.of(proposal).op
    return out


def _record_merged(
    kb: KB,
    proposal: Proposal,
    who: Identity,
    reason: str | None,
    branch: str,
    tip: str,
    others: list[RefUpdate],
    current: str | None,
    self_approved: bool,
) -> dict[str, Any]:
    """Record the decision for a proposal already merged by git (not by vouch)."""
    repo = kb.repo
    actor = who.name
    kind = KINDS.get(proposal.kind)
    obj_path = (
        kb.rel(kind.path_for(proposal.object_id))
        if kind and ids.is_object_id(proposal.object_id)
        else ""
    )
    blob = repo.blob_at(tip, obj_path) if obj_path else None
    if kind is None or blob is None:
        raise GateRefused(
            f"proposal {proposal.id} was merged outside vouch, but "
            f"{obj_path or 'its object'} is not on {branch.removeprefix('refs/heads/')}",
            hint="nothing to approve; reject it or propose the content again",
        )
    unseen = pending.merged_problems(kb, proposal, tip)
    if unseen:  # edited after the merge: the text on the branch is not what was reviewed
        raise GateRefused(
            unseen[0],
            hint=f"revert the edit (or the merge), or propose the new text; `vouch show "
            f"{proposal.id}` shows what was proposed",
        )
    note = "merged outside vouch; decision recorded afterwards"
    text = repo.read_blob(blob).decode("utf-8")
    stamped = {
        obj_path: repo.write_blob(kind.edit(text, {"approved_by": actor}, where=obj_path).encode())
    }
    changes: dict[str, str | None] = {
        **stamped,
        kb.rel(records.decided_path(proposal.id)): repo.write_blob(
            decision_commit.record(
                proposal,
                "approved",
                actor,
                reason,
                note,
                deciders.record_fields(proposal, who, self_approved),
                seals.landed(kb, stamped),
            )
        ),
    }
    data = {"reason": reason or "", "note": note, **deciders.event_fields(who, self_approved)}
    logs, chain = decision_commit.logs(
        kb, tip, decision_commit.events(proposal, "proposal.approve", actor, data)
    )
    changes.update(logs)
    changes = {p: b for p, b in changes.items() if repo.blob_at(tip, p) != b}
    final = repo.edit_tree(repo.store.peel_tree(tip), changes)
    message = decision_commit.message(
        proposal,
        "approved",
        actor,
        reason or "",
        chain,
        f"vouch: record approval of {proposal.kind} {proposal.object_id} (merged outside vouch)",
        deciders.trailers(who, self_approved),
    )
    commit = repo.write_commit(final, [tip], message, author=decision_commit.author(who))
    settings = committed.settings_at(kb, tip)
    if deciders.check_keys(kb, commit, proposal, settings, self_approved) != self_approved:
        return _record_merged(kb, proposal, who, reason, branch, tip, others, current, True)
    fault("committed")
    land(
        kb,
        branch,
        tip,
        commit,
        changes,
        others,
        message=f"vouch: record approval of {proposal.id}",
        current=current,
    )
    return {**_approved(proposal, commit), "recorded_after_merge": True}


def reject(
    kb: KB, actor: str | Identity, proposal_id: str, reason: str, *, expect: str | None = None
) -> dict[str, Any]:
    """Reject one proposal — the commit that was reviewed (pinned as approve pins it).

    A proposer rejecting their own proposal withdraws it: the same decision (the
    proposal goes to refs/vouch/rejected/, its record to decided/), recorded as a
    withdrawal — `withdrawn: true` in the record, a `Vouch-Withdrawn` trailer, the
    audit event `proposal.withdraw` — so nobody reads it as a reviewer's judgement,
    and proposing the same content again needs no `again`."""
    who = principal(kb, actor)
    actor = who.name
    if not isinstance(reason, str) or not reason.strip():
        raise UsageError("a rejection needs a reason", hint="pass --reason")
    repo = kb.repo
    with gate_lock(kb):
        proposal = records.find(kb, proposal_id)
        current = checked_out_branch(kb)
        branch, tip = bases.target(kb, proposal)
        _decided_check(kb, proposal, tip)
        # linked proposals that named it as what they wait for cannot land any more
        waited_on_by = [
            p.id
            for p in pending.open_proposals(kb)
            if p.id != proposal.id
            and proposal.id in ",".join(p.trailers.get("Vouch-Waits-For", [])).split(",")
        ]
        # a change proposal merged by git changed nothing (its tree is its base's)
        if repo.is_ancestor(proposal.commit, tip) and not gate_changes.is_change(proposal):
            raise GateRefused(
                f"proposal {proposal.id} was already merged into "
                f"{branch.removeprefix('refs/heads/')} outside vouch; its content is live",
                hint=f"record the decision with `vouch show {proposal.id}` then `vouch "
                f"approve {proposal.id}`, or revert the merge with `git revert` first",
            )
        others: list[RefUpdate] = pins.pinned(kb, proposal, expect)
        # the proposer's own: a withdrawal (the proposer is its first commit's author;
        # a branch that is no line from its base has none, and is never withdrawn)
        withdrawn = deciders.withdraws(who, proposal) and records.origin_known(kb, proposal)
        people = {**deciders.record_fields(proposal, who, False), **deciders.withdrawal(withdrawn)}
        changes: dict[str, str | None] = {
            kb.rel(records.decided_path(proposal.id)): repo.write_blob(
                decision_commit.record(proposal, "rejected", actor, reason, people=people)
            ),
        }
        data = {"reason": reason, **deciders.event_fields(who, False)}
        event = deciders.WITHDRAW_EVENT if withdrawn else "proposal.reject"
        logs, chain = decision_commit.logs(
            kb, tip, decision_commit.events(proposal, event, actor, data)
        )
        changes.update(logs)
        tree = repo.edit_tree(repo.store.peel_tree(tip), changes)
        extra = {**deciders.trailers(who, False), **deciders.withdrawn_trailer(withdrawn)}
        subject = f"vouch: withdraw {proposal.kind} {proposal.object_id}" if withdrawn else None
        commit = repo.write_commit(
            tree,
            [tip],
            decision_commit.message(proposal, "rejected", actor, reason, chain, subject, extra),
            author=decision_commit.author(who),
        )
        fault("committed")
        others.append((records.REJECTED_PREFIX + proposal.id, proposal.commit, None))
        if proposal.local:
            others.append((proposal.ref, None, proposal.commit))
        land(
            kb,
            branch,
            tip,
            commit,
            changes,
            others,
            message=f"vouch: reject {proposal.id}",
            current=current,
        )
    return {
        "ok": True,
        "proposal_id": proposal.id,
        "commit": commit,
        "waited_on_by": waited_on_by,
        "withdrawn": withdrawn,
    }
