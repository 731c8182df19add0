"""Open a change proposal (`vouch.gate.changes`): check the change on the branch's tip,
name what it touches, and write the request as one commit whose tree is its base's."""

from __future__ import annotations

import secrets
from typing import Any

from vouch.core import ids
from vouch.errors import GateRefused, UsageError
from vouch.gate import change_plans, records
from vouch.gate.changes import CHANGE, MAX_LISTED, OPS, Change, is_change, of
from vouch.gate.identity import Identity, principal
from vouch.store.kb import KB, PROPOSAL_PREFIX
from vouch.store.recovery import gate_lock


def propose_change(
    kb: KB,
    actor: str | Identity,
    target: str,
    op: str,
    *,
    evidence: str | None = None,
    drop: list[str] | tuple[str, ...] = (),
    also: list[str] | tuple[str, ...] = (),
    rationale: str | None = None,
) -> dict[str, Any]:
    """Open a change proposal, after checking the change on the branch's tip: a change
    that cannot land is refused now (E102, every problem), not at approval."""
    if op not in OPS:
        raise UsageError(f"unknown change {op!r}", hint="one of: " + ", ".join(OPS))
    if len(drop) + len(also) > MAX_LISTED:
        raise UsageError(
            f"a change names at most {MAX_LISTED} other objects ({len(drop) + len(also)} given)",
            hint="split it into several proposals",
        )
    if evidence is not None and len(evidence) > 300:
        raise UsageError("the new citation is longer than 300 characters", hint="cite a span")
    ids.check_id(target, "changed object id")
    for item in (*drop, *also):
        ids.check_id(item, "object id")
    who = principal(kb, actor)
    repo = kb.repo
    with gate_lock(kb):
        branch = repo.current_branch()
        base = repo.peek(branch) if branch else None
        if branch is None or base is None:
            raise UsageError(
                "no branch with commits is checked out", hint="check out a branch first"
            )
        change = Change(
            op,
            target,
            evidence.strip() if evidence else None,
            tuple(dict.fromkeys(drop)),
            tuple(dict.fromkeys(also)),
        )
        plan = change_plans.plan(kb, base, change, proposing=True)
        change = Change(
            op, target, plan.evidence or change.evidence, change.drop, change.also, plan.unlinked
        )
        open_id = _open_same(kb, change)
        if open_id:
            return {
                "proposal_id": open_id,
                "valid": True,
                "errors": [],
                "duplicate": "pending",
                "change": change.to_json(),
            }
        pid = ids.proposal_id({"change": change.to_json(), "nonce": secrets.token_hex(8)})
        message = records.message(
            f"vouch: propose {CHANGE}: {change.describe()}"[:200],
            rationale or "",
            {
                "Vouch-Proposal": pid,
                "Vouch-Kind": CHANGE,
                "Vouch-Object": target,
                "Vouch-Proposer": who.name,
                "Vouch-As": who.label if who.label and who.label != who.name else None,
                "Vouch-Base": branch,
                "Vouch-Base-Commit": base,
                **change.trailers(),
            },
        )
        tree = repo.store.peel_tree(base)
        assert tree is not None
        commit = repo.write_commit(tree, [base], message, author=(who.name, who.email))
        repo.update_ref(PROPOSAL_PREFIX + pid, commit, None, message=f"vouch: propose {pid}")
    return {
        "proposal_id": pid,
        "valid": True,
        "errors": [],
        "change": change.to_json(),
        "touches": plan.touched(),
    }


def _open_same(kb: KB, change: Change) -> str | None:
    """An open local change proposal asking for exactly this change."""
    for p in records.read_proposals(kb, [PROPOSAL_PREFIX], unmerged=True):
        if not is_change(p):
            continue
        try:
            if of(p) == change:
                return p.id
        except GateRefused:
            continue
    return None
