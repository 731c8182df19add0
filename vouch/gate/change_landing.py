"""Approving a change proposal (`vouch.gate.changes`): the merge commit that lands the
edit the request asks for, worked out again on the commit it lands on — as
`vouch.gate.decide` lands a proposed object, with the same decision record, trailers and
audit events, and the edit's seals in the approval's event."""

from __future__ import annotations

from vouch.core.config import Config
from vouch.errors import GateRefused, VouchError
from vouch.gate import change_plans, deciders, decision_commit, records, seals, verify
from vouch.gate import changes as gate_changes
from vouch.gate.identity import Identity
from vouch.gate.records import Proposal
from vouch.store.kb import KB
from vouch.store.landing import fault


def land(
    kb: KB,
    who: Identity,
    proposal: Proposal,
    reason: str | None,
    tip: str,
    settings: Config,
    self_approved: bool,
) -> tuple[str, dict[str, str | None]]:
    """The merge commit that lands an approved change proposal: the edit worked out
    again on `tip` from the request alone (`change_plans`), its seals in the approval's
    audit event, the decision record and events, as `_merge_one` lands an object."""
    repo = kb.repo
    verify.check_change(kb, proposal, tip)
    change = gate_changes.of(proposal)
    try:
        plan = change_plans.plan(kb, tip, change)
    except VouchError as exc:
        raise GateRefused(
            f"proposal {proposal.id} cannot land as it stands: {exc.message}",
            hint=f"nothing was written; reject it (vouch reject {proposal.id} --reason ...) "
            "and propose the change again",
        ) from exc
    fault("merged")
    base: dict[str, str | None] = {}
    for rel, wanted in plan.files.items():
        path = kb.rel(rel)
        blob = repo.write_blob(wanted) if wanted is not None else None
        if repo.blob_at(tip, path) != blob:
            base[path] = blob
    sealed = {
        **seals.edited(
            kb, [(r, plan.before[r], d) for r, d in plan.files.items() if d and r in plan.before]
        ),
        **seals.removed(kb, [(r, plan.before[r]) for r, d in plan.files.items() if d is None]),
    }
    while True:
        landing = dict(base)
        landing[kb.rel(records.decided_path(proposal.id))] = repo.write_blob(
            decision_commit.record(
                proposal,
                "approved",
                who.name,
                reason,
                people=deciders.record_fields(proposal, who, self_approved),
            )
        )
        data = {
            "reason": reason or "",
            **deciders.event_fields(who, self_approved),
            "change": change.op,
            "target": change.target,
            "objects": plan.object_ids(),
            **({"made": plan.made} if plan.made else {}),  # evidence it creates
            **({seals.FIELD: sealed} if sealed else {}),
        }
        logs, chain = decision_commit.logs(
            kb, tip, decision_commit.events(proposal, "proposal.approve", who.name, data)
        )
        landing.update(logs)
        final = repo.edit_tree(repo.store.peel_tree(tip), landing)
        message = decision_commit.message(
            proposal,
            "approved",
            who.name,
            reason or "",
            chain,
            f"vouch: approve change: {change.describe()}"[:200],
            {**deciders.trailers(who, self_approved), "Vouch-Change": change.op},
        )
        parents = [tip] if repo.is_ancestor(proposal.commit, tip) else [tip, proposal.commit]
        commit = repo.write_commit(final, parents, message, author=decision_commit.author(who))
        keyed = deciders.check_keys(kb, commit, proposal, settings, self_approved)
        if keyed == self_approved:
            return commit, landing
        self_approved = keyed
