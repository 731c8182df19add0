"""Reading the gate: open proposals (one for-each-ref call) and one proposal in full."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vouch import audit
from vouch.errors import NotFound
from vouch.gate import records
from vouch.kb import KB, PROPOSAL_PREFIX, matches
from vouch.kinds import KINDS


def open_proposals(kb: KB) -> list[records.Proposal]:
    """Proposal branches — local, and remote-tracking ones (review on a host) — that the
    checked-out branch has not decided yet.

    A branch can outlive its decision: a remote one until the remote deletes it, a local
    one when the decision arrived by `git pull`. Each is checked with one in-process
    lookup of its decision file, pipelined through the long-lived cat-file, so listing
    stays one git process plus a few pipe round trips.
    """
    found = records.read_proposals(kb, [PROPOSAL_PREFIX, records.REMOTE_PREFIX,
                                        records.REJECTED_PREFIX])
    rejected = {p.id for p in found if p.ref.startswith(records.REJECTED_PREFIX)}
    by_id: dict[str, records.Proposal] = {}
    for p in sorted(found, key=lambda p: not p.local):  # the local branch wins
        if (p.local or "/vouch/proposal/" in p.ref) and p.id not in by_id \
                and p.id not in rejected:
            by_id[p.id] = p
    head = kb.repo.peek("HEAD")
    if head and by_id:
        pids = list(by_id)
        vouch_dir = kb.rel(".")  # the repository path of .vouch/, computed once
        decisions = kb.repo.store.info_many(
            [f"{head}:{vouch_dir}/{records.decided_path(pid)}" for pid in pids])
        for pid, decided in zip(pids, decisions, strict=True):
            if decided is not None:
                del by_id[pid]
    return sorted(by_id.values(), key=lambda p: p.id)


def list_pending(kb: KB, limit: int | None = 50, offset: int = 0,
                 filter: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    rows = [p.to_json() for p in open_proposals(kb)]
    if filter:
        rows = [r for r in rows if matches(r, filter)]
    return rows[offset: None if limit is None else offset + limit]


def show(kb: KB, proposal_id: str) -> dict[str, Any]:
    """Metadata, the proposed object and the diff the proposal would merge (or merged)."""
    records.check_proposal_id(proposal_id)
    repo = kb.repo
    found = records.read_proposals(kb, [*records.branch_patterns(proposal_id),
                                        records.REJECTED_PREFIX + proposal_id])
    found.sort(key=lambda p: (not p.local, p.ref.startswith(records.REJECTED_PREFIX)))
    decision = records.decision_of(kb, proposal_id, repo.resolve("HEAD"))
    if not found:
        if decision is None:
            raise NotFound(f"no proposal {proposal_id}",
                           hint="`vouch pending` lists open proposals")
        commit = str(decision.get("proposal_commit") or "")
        return {"proposal_id": proposal_id, "state": decision.get("decision"),
                "decision": decision, "diff": _diff(kb, commit) if commit else ""}
    proposal = found[0]
    state = "rejected" if proposal.ref.startswith(records.REJECTED_PREFIX) else (
        (decision or {}).get("decision") or "pending")
    obj = None
    kind = KINDS.get(proposal.kind)
    if kind is not None:
        path = kb.rel(kind.path_for(proposal.object_id))
        blob = repo.blob_at(proposal.commit, path)
        if blob:
            obj = kind.load(repo.read_blob(blob).decode("utf-8"), where=path)
    return {**proposal.to_json(), "state": state, "object": obj, "decision": decision,
            "diff": _diff(kb, proposal.commit)}


def _diff(kb: KB, commit: str) -> str:
    """What the proposal commit adds to its parent, without the audit bookkeeping."""
    parents = kb.repo.commit_parents(commit)
    if not parents:
        return ""
    return kb.repo.diff_text(parents[0], commit, [f":(exclude){kb.rel(audit.LOG_NAME)}",
                                                   f":(exclude){kb.rel(audit.SEGMENT_DIR)}"])
