"""Approve and reject: the two ways a proposal ends.

Approve merges the proposal into its base branch with one merge commit that also sets
`approved_by` on the object, writes `decided/<hh>/<id>.yaml` and appends the audit
events. The merge is computed by `git merge-tree --write-tree` (no work tree, no index),
so it works while the user has staged, unstaged and untracked work — which stays exactly
as it was. Reject commits the decision record and keeps the proposal commit under
`refs/vouch/rejected/<id>`. In both, every ref change (base branch, proposal branch,
rejected ref) happens in one git ref transaction.
"""

from __future__ import annotations

from typing import Any

from vouch import audit, ids, yamlio
from vouch.errors import Conflict, CorruptFile, GateRefused, UsageError
from vouch.gate import records
from vouch.gate.landing import checked_out_branch, fault, gate_lock, land
from vouch.gate.records import Proposal
from vouch.kb import KB
from vouch.kinds import KINDS, Kind

TRUSTED_ROLE = "trusted-agent"


def _target(kb: KB, proposal: Proposal, current: str | None) -> tuple[str, str]:
    """The branch to land on — the proposal's base when it exists here — and its tip."""
    for ref in (proposal.base, current):
        if ref and ref.startswith("refs/heads/"):
            tip = kb.repo.peek(ref)
            if tip:
                return ref, tip
    raise UsageError(f"base branch {proposal.base or '?'} of proposal {proposal.id} is not here",
                     hint="check out a branch to approve into")


def _merge(kb: KB, tip: str, proposal: Proposal) -> tuple[str, dict[str, str | None]]:
    """(tree to edit, changes to apply to it) that merge the proposal into `tip`.

    A proposal made by vouch is one commit that only adds content-addressed files (and
    appends to the audit log, rebuilt by the caller), so the merge is those files on top
    of the tip's tree — computed in-process. Anything else (extra commits pushed to the
    proposal branch during review, edits to files the tip changed too) goes through
    `git merge-tree --write-tree`, which handles every case.
    """
    repo = kb.repo
    log_path = kb.rel(audit.LOG_NAME)
    tip_tree = repo.store.peel_tree(tip)
    assert tip_tree is not None
    if proposal.base_commit and repo.commit_parents(proposal.commit) == [proposal.base_commit]:
        base_tree = repo.store.peel_tree(proposal.base_commit)
        prop_tree = repo.store.peel_tree(proposal.commit)
        assert prop_tree is not None
        added = repo.tree_changes(base_tree, prop_tree)
        added.pop(log_path, None)
        clean = True
        for path, blob in added.items():
            now = repo.blob_at(tip_tree, path)
            if now != blob and now != (repo.blob_at(base_tree, path) if base_tree else None):
                clean = False  # the tip changed this path too: let git merge it
                break
        if clean:
            return tip_tree, added
    merged, conflicts = repo.merge_tree(tip, proposal.commit)
    conflicts = [c for c in conflicts if c != log_path]  # rebuilt by the caller
    if conflicts:
        raise Conflict(f"proposal {proposal.id} conflicts with the base branch: "
                       + ", ".join(conflicts[:5]),
                       hint="reject it and propose again from the current branch")
    return merged, {}


def _with_approver(kind: Kind, text: str, actor: str, where: str) -> str:
    """The object file with `approved_by` set.

    The file is usually exactly what vouch wrote, so the key is appended as text (what a
    round-trip edit would produce, minus its ~5 ms) and the result checked by parsing;
    anything unusual goes through the comment-preserving `Kind.edit`.
    """
    line = yamlio.dump_yaml({"approved_by": actor})
    current = kind.load(text, where=where)
    if "approved_by" not in current and text.endswith("\n"):
        if kind.body_field is None:
            candidate = text + line
        else:
            close = text.find("\n---\n", 3)
            candidate = text[: close + 1] + line + text[close + 1 :] if close > 0 else ""
        try:
            if candidate and kind.load(candidate, where=where) == {**current,
                                                                   "approved_by": actor}:
                return candidate
        except CorruptFile:
            pass
    return kind.edit(text, {"approved_by": actor}, where=where)


def _new_events(kb: KB, proposal: Proposal) -> list[str]:
    """The audit lines the proposal commit added (its proposal.create event)."""
    repo = kb.repo
    log_path = kb.rel(audit.LOG_NAME)

    def lines(commit: str | None) -> list[bytes]:
        blob = repo.blob_at(commit, log_path) if commit else None
        return [x for x in repo.read_blob(blob).split(b"\n") if x.strip()] if blob else []

    before = set(lines(proposal.base_commit or None))
    return [x.decode() for x in lines(proposal.commit) if x not in before]


def _decision(proposal: Proposal, decision: str, actor: str, reason: str | None) -> bytes:
    record = {
        "proposal_id": proposal.id, "decision": decision, "kind": proposal.kind,
        "object_id": proposal.object_id, "proposer": proposal.proposer, "decided_by": actor,
        "decided_at": ids.now_iso(), "reason": reason or None, "base": proposal.base,
        "proposal_commit": proposal.commit,
    }
    return yamlio.dump_yaml({k: v for k, v in record.items() if v is not None}).encode()


def _message(proposal: Proposal, decision: str, actor: str, reason: str) -> str:
    """The decision commit's message: `vouch: approve|reject <kind> <id>` plus trailers."""
    verb = "approve" if decision == "approved" else "reject"
    return records.message(
        f"vouch: {verb} {proposal.kind} {proposal.object_id}", reason, {
            "Vouch-Proposal": proposal.id, "Vouch-Decision": decision,
            "Vouch-Approver": actor, "Vouch-Proposer": proposal.proposer,
            "Vouch-Kind": proposal.kind, "Vouch-Object": proposal.object_id,
        })


def _audit_changes(kb: KB, tip: str, tree: str, proposal: Proposal, event: str, actor: str,
                   data: dict[str, Any]) -> dict[str, str | None]:
    """The active log of `tip` plus the proposal's own events plus this decision."""
    repo = kb.repo
    blob = repo.blob_at(tip, kb.rel(audit.LOG_NAME))
    log = repo.read_blob(blob) if blob else b""
    new_log, segments, _ = audit.append_events(
        log, [(event, actor, [proposal.id, proposal.object_id], data)],
        verbatim=_new_events(kb, proposal), seq=records.segment_seq(kb, tip, log))
    files = {**segments, audit.LOG_NAME: new_log}
    changes: dict[str, str | None] = {}
    for rel, payload in files.items():
        path = kb.rel(rel)
        if rel != audit.LOG_NAME and repo.blob_at(tree, path):
            continue  # the same closed segment already arrived with the merge
        changes[path] = repo.write_blob(payload)
    return changes


def _decided_check(kb: KB, proposal: Proposal, tip: str) -> None:
    decision = records.decision_of(kb, proposal.id, tip)
    if decision or kb.repo.peek(records.REJECTED_PREFIX + proposal.id):
        raise records.refuse_decided(proposal.id, decision)


def approve(kb: KB, actor: str, proposal_id: str, reason: str | None = None) -> dict[str, Any]:
    repo = kb.repo
    with gate_lock(kb):
        proposal = records.find(kb, proposal_id)
        role = kb.config.get("review.approver_role", "human")
        if actor == proposal.proposer and role != TRUSTED_ROLE:
            raise GateRefused(
                f"{actor} proposed {proposal.id} and cannot also approve it",
                hint="another person must approve (or set review.approver_role: "
                     "trusted-agent in .vouch/config.yaml)")
        kind = KINDS.get(proposal.kind)
        if kind is None or not ids.is_object_id(proposal.object_id):
            raise GateRefused(f"proposal {proposal.id} does not name a knowledge object",
                              hint="its commit lacks Vouch-Kind / Vouch-Object trailers")
        current = checked_out_branch(kb)
        branch, tip = _target(kb, proposal, current)
        _decided_check(kb, proposal, tip)
        obj_path = kb.rel(kind.path_for(proposal.object_id))
        if repo.blob_at(tip, obj_path) is not None:
            # e.g. the same claim proposed in two clones, one already approved
            raise GateRefused(f"{proposal.kind} {proposal.object_id} is already approved "
                              f"on {branch.removeprefix('refs/heads/')}",
                              hint=f"reject this proposal: vouch reject {proposal.id} "
                                   "--reason duplicate")
        tree, changes = _merge(kb, tip, proposal)
        fault("merged")
        obj_blob = changes.get(obj_path) or repo.blob_at(tree, obj_path)
        if obj_blob is None:
            raise GateRefused(f"proposal {proposal.id} does not contain {obj_path}")
        text = repo.read_blob(obj_blob).decode("utf-8")
        edited = _with_approver(kind, text, actor, obj_path)
        changes[obj_path] = repo.write_blob(edited.encode())
        changes[kb.rel(records.decided_path(proposal.id))] = repo.write_blob(
            _decision(proposal, "approved", actor, reason))
        changes.update(_audit_changes(kb, tip, tree, proposal, "proposal.approve", actor, {
            "kind": proposal.kind, "proposer": proposal.proposer, "reason": reason or ""}))
        final = repo.edit_tree(tree, changes)
        message = _message(proposal, "approved", actor, reason or "")
        commit = repo.write_commit(final, [tip, proposal.commit], message)
        fault("committed")
        others = [(proposal.ref, None, proposal.commit)] if proposal.local else []
        land(kb, branch, tip, commit, _changed(kb, tip, final), others,
             message=f"vouch: approve {proposal.id}", current=current)
    return {"ok": True, "object_id": proposal.object_id, "object_kind": proposal.kind,
            "proposal_id": proposal.id, "commit": commit}


def _changed(kb: KB, tip: str, final: str) -> dict[str, str | None]:
    """Paths the new commit changes relative to the tip (what the work tree must follow)."""
    return kb.repo.tree_changes(kb.repo.store.peel_tree(tip), final)


def reject(kb: KB, actor: str, proposal_id: str, reason: str) -> dict[str, Any]:
    if not isinstance(reason, str) or not reason.strip():
        raise UsageError("a rejection needs a reason", hint="pass --reason")
    repo = kb.repo
    with gate_lock(kb):
        proposal = records.find(kb, proposal_id)
        current = checked_out_branch(kb)
        branch, tip = _target(kb, proposal, current)
        _decided_check(kb, proposal, tip)
        base_tree = repo.store.peel_tree(tip)
        assert base_tree is not None
        changes: dict[str, str | None] = {
            kb.rel(records.decided_path(proposal.id)): repo.write_blob(
                _decision(proposal, "rejected", actor, reason)),
        }
        changes.update(_audit_changes(kb, tip, base_tree, proposal, "proposal.reject", actor, {
            "kind": proposal.kind, "proposer": proposal.proposer, "reason": reason}))
        tree = repo.edit_tree(base_tree, changes)
        commit = repo.write_commit(tree, [tip], _message(proposal, "rejected", actor, reason))
        fault("committed")
        others: list[tuple[str, str | None, str | None]] = [
            (records.REJECTED_PREFIX + proposal.id, proposal.commit, None)]
        if proposal.local:
            others.append((proposal.ref, None, proposal.commit))
        land(kb, branch, tip, commit, _changed(kb, tip, tree), others,
             message=f"vouch: reject {proposal.id}", current=current)
    return {"ok": True, "proposal_id": proposal.id, "commit": commit}
