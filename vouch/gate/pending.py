"""Reading the gate: open proposals (one for-each-ref call) and one proposal in full."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Mapping
from typing import Any

from vouch.core import ids
from vouch.errors import CorruptFile, GateRefused, GitFailure, NotFound
from vouch.gate import changes, records
from vouch.kinds import KINDS
from vouch.store.kb import KB, PROPOSAL_PREFIX, matches

_COMMIT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def open_proposals(kb: KB) -> list[records.Proposal]:
    """Proposal branches — local, and remote-tracking ones (review on a host) — that the
    checked-out branch has neither decided nor merged (a `git merge` outside vouch).

    A branch can outlive its decision: a remote one until the remote deletes it, a local
    one when the decision arrived by `git pull`. Each is checked with one in-process
    lookup of its decision file, pipelined through the long-lived cat-file, so listing
    stays one git process plus a few pipe round trips.
    """
    found = records.read_proposals(
        kb, [PROPOSAL_PREFIX, records.REMOTE_PREFIX, records.REJECTED_PREFIX], unmerged=True
    )
    rejected = {p.id for p in found if p.ref.startswith(records.REJECTED_PREFIX)}
    by_id: dict[str, records.Proposal] = {}
    for p in sorted(found, key=lambda p: not p.local):  # the local branch wins
        if (p.local or "/vouch/proposal/" in p.ref) and p.id not in by_id and p.id not in rejected:
            by_id[p.id] = p
    head = kb.repo.peek("HEAD")
    if head and by_id:
        pids = list(by_id)
        vouch_dir = kb.rel(".")  # the repository path of .vouch/, computed once
        decisions = kb.repo.store.info_many(
            [f"{head}:{vouch_dir}/{records.decided_path(pid)}" for pid in pids]
        )
        for pid, decided in zip(pids, decisions, strict=True):
            if decided is not None:
                del by_id[pid]
    return sorted(by_id.values(), key=lambda p: p.id)


def open_objects(kb: KB) -> dict[str, str]:
    """Object id -> the open proposal that adds it (what a linked proposal may wait for)."""
    return {p.object_id: p.id for p in open_proposals(kb) if ids.is_object_id(p.object_id)}


def waits_for(
    kb: KB,
    proposal: records.Proposal,
    obj: Any,
    head: str | None,
    known: Callable[[], Mapping[str, str]] | None = None,
) -> dict[str, str]:
    """The references of a proposal's object that only open proposals hold, on `head`
    (object id -> proposal id)."""
    from vouch.gate.references import BaseView, check_references

    if not isinstance(obj, dict):
        return {}
    _, waits = check_references(
        BaseView(kb, head),
        proposal.kind,
        obj,
        (),
        False,
        pending=known or (lambda: open_objects(kb)),
        allow_pending=True,
    )
    return {oid: pid for oid, pid in waits.items() if pid != proposal.id}


def list_pending(
    kb: KB, limit: int | None = 50, offset: int = 0, filter: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    from vouch.gate.thread import comment_tally

    rows = [p.to_json() for p in open_proposals(kb)]
    if filter:
        rows = [r for r in rows if matches(r, filter)]
    rows = rows[offset : None if limit is None else offset + limit]
    tally = comment_tally(kb) if rows else {}
    for row in rows:  # a reviewer asked for changes: has the proposer revised since?
        count, on = tally.get(row["proposal_id"], (0, ""))
        row["comments"] = count
        row["revised_since_comment"] = bool(count) and on != row["commit"]
    return rows


def show(kb: KB, proposal_id: str, *, record: bool = False) -> dict[str, Any]:
    """Metadata, the proposed object, what approve would refuse, and the whole diff.

    With `record` (a person at the CLI), the commit shown is remembered in
    refs/vouch/reviewed/<id>: approve then refuses the proposal if it changes.
    """
    records.check_proposal_id(proposal_id)
    repo = kb.repo
    found = records.read_proposals(
        kb, [*records.branch_patterns(proposal_id), records.REJECTED_PREFIX + proposal_id]
    )
    found.sort(key=lambda p: (not p.local, p.ref.startswith(records.REJECTED_PREFIX)))
    head = repo.resolve("HEAD")
    decision = records.decision_of(kb, proposal_id, head)
    if not found:
        if decision is None:
            merged = records.find_merged(kb, proposal_id, head)
            if merged is None:
                raise NotFound(
                    f"no proposal {proposal_id}", hint="`vouch pending` lists open proposals"
                )
            unseen = merged_problems(kb, merged, head)
            if record and not unseen:
                _pin(kb, merged)
            return {
                **merged.to_json(),
                "state": "merged-without-decision",
                "object": None,
                "decision": None,
                "problems": unseen,
                "diff": _diff(kb, merged.commit),
            }
        commit = str(decision.get("proposal_commit") or "")
        # a decision imported by a bundle names a commit of the repository it was made in
        here = bool(_COMMIT_ID.fullmatch(commit)) and repo.peek(commit) == commit
        return {
            "proposal_id": proposal_id,
            "state": decision.get("decision"),
            "decision": decision,
            "diff": _diff(kb, commit) if here else "",
        }
    proposal = found[0]
    state = (
        "rejected"
        if proposal.ref.startswith(records.REJECTED_PREFIX)
        else ((decision or {}).get("decision") or "pending")
    )
    a_change = changes.is_change(proposal)  # a git merge of one changed nothing
    if state == "pending" and head and not a_change and repo.is_ancestor(proposal.commit, head):
        state = "merged-without-decision"
    obj = None
    kind = KINDS.get(proposal.kind)
    problems: list[str] = []
    if kind is not None and ids.is_object_id(proposal.object_id):
        path = kb.rel(kind.path_for(proposal.object_id))
        blob = repo.blob_at(proposal.commit, path)
        if blob:
            with contextlib.suppress(CorruptFile, UnicodeDecodeError):
                obj = kind.load(repo.read_blob(blob).decode("utf-8"), where=path)
    from vouch.gate.thread import thread

    revisions, comments = thread(kb, proposal)
    waits: dict[str, str] = {}
    if state == "pending":
        waits = waits_for(kb, proposal, obj, head)
        problems = _problems(kb, proposal, head, set(waits))
        if record and not problems:
            _pin(kb, proposal)
    elif state == "merged-without-decision":
        # merged by git (a host's button): approve records the decision afterwards, for
        # exactly the commit shown here
        problems = merged_problems(kb, proposal, head)
        if record and not problems:
            _pin(kb, proposal)
    shown = {
        **proposal.to_json(),
        "state": state,
        "object": obj,
        "decision": decision,
        "problems": problems,
        "waits_for": [{"id": oid, "proposal_id": pid} for oid, pid in waits.items()],
        "revisions": revisions,
        "comments": comments,
        "diff": _diff(kb, proposal.commit, proposal.base_commit),
    }
    return shown


def _pin(kb: KB, proposal: records.Proposal) -> None:
    """Remember the commit shown (refs/vouch/reviewed/<id>): what approve may decide."""
    with contextlib.suppress(GitFailure):
        kb.repo.update_ref(
            records.REVIEWED_PREFIX + proposal.id,
            proposal.commit,
            None,
            message="vouch: show",
            force=True,
        )


def merged_problems(kb: KB, proposal: records.Proposal, head: str | None) -> list[str]:
    """Why recording the decision for a proposal git merged would not be about what
    is shown: its object on HEAD is not the one the proposal commit holds (edited after
    the merge, or gone)."""
    kind = KINDS.get(proposal.kind)
    if head is None or kind is None or not ids.is_object_id(proposal.object_id):
        return [f"proposal {proposal.id} names no object vouch can read; approve would refuse it"]
    path = kb.rel(kind.path_for(proposal.object_id))
    now, proposed = kb.repo.blob_at(head, path), kb.repo.blob_at(proposal.commit, path)
    if now is None:
        return [f"{path} is not there any more: nothing to approve"]
    if now != proposed:
        return [
            f"{path} is not what proposal {proposal.id} proposed any more (changed after the "
            "merge): approving would record a decision about text nobody reviewed"
        ]
    return []


def _problems(kb: KB, proposal: records.Proposal, head: str | None, landing: set[str]) -> list[str]:
    """Why approve would refuse this proposal as it stands (empty: it is well-formed),
    counting what it waits for as landing first."""
    from vouch.gate import bases, verify

    if head is None:
        return []
    base = bases.problem(kb, proposal)
    if base is not None:  # checked first: approve refuses it before anything else
        return [f"proposal {proposal.id} cannot land: {base}; approve would refuse it"]
    if changes.is_change(proposal):
        return []  # what it would write is judged by `change_view`, for the review screen
    try:
        verify.check(kb, proposal, head, require_citations=True, landing=landing)
    except GateRefused as exc:
        return [exc.message]
    return []


def _diff(kb: KB, commit: str, base: str | None = None) -> str:
    """Everything the proposal changes against its base (a revised one: all revisions
    together, what approve merges), else against its parent — every path shown."""
    parents = kb.repo.commit_parents(commit)
    if not parents:
        return ""
    if base and base != parents[0] and kb.repo.is_ancestor(base, commit):
        return kb.repo.diff_text(base, commit)
    return kb.repo.diff_text(parents[0], commit)


def find_pending_object(
    kb: KB, object_id: str, kinds: tuple[str, ...]
) -> tuple[str, dict[str, Any], records.Proposal] | None:
    """An object only an open proposal holds (a proposed claim, the evidence a claim
    proposal makes inline): (kind, object, proposal), or None. One pipelined lookup
    per proposal and kind through the long-lived cat-file."""
    if not ids.is_object_id(object_id):
        return None
    proposals = open_proposals(kb)
    wanted = [(p, k) for p in proposals for k in kinds]
    paths = [kb.rel(KINDS[k].path_for(object_id)) for k in kinds]
    found = kb.repo.store.info_many([f"{p.commit}:{paths[kinds.index(k)]}" for p, k in wanted])
    # a proposal's tree holds its whole base: only what it adds is its own (an object
    # deleted or redacted since was in every older proposal's base)
    bases = kb.repo.store.info_many(
        [f"{p.base_commit or p.commit + '^'}:{paths[kinds.index(k)]}" for p, k in wanted]
    )
    for (proposal, kind), info, base in zip(wanted, found, bases, strict=True):
        if info is None or info[1] != "blob" or (base is not None and base[0] == info[0]):
            continue
        where = f"{proposal.id}:{paths[kinds.index(kind)]}"
        with contextlib.suppress(CorruptFile, UnicodeDecodeError):
            obj = KINDS[kind].load(kb.repo.read_blob(info[0]).decode("utf-8"), where=where)
            return kind, obj, proposal
    return None
