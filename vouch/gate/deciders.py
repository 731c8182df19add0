"""Who may decide a proposal: never its proposer, unless a person working alone says so.

The proposer is the proposal commit's author (`records.with_people`); the decider is the
identity of whoever runs the decision (`vouch.gate.identity`). They are the same principal
when their e-mails or names match after folding, or a `--as` label names the other. With
`review.require_signed_decisions: true` the signer is the identity too: a decision commit
signed with the key that signed the proposal is the proposer's own, whatever names the
two commits carry.

A self-approval is refused unless the target branch's committed configuration says
`review.allow_self_approval: true` (a person working alone) — then it is recorded as
such (`self_approved: true` in the decision record, the audit event and a trailer) — or
`review.approver_role: trusted-agent` (agents approve their own, as before).
"""

from __future__ import annotations

from typing import Any

from vouch.core.config import Config
from vouch.errors import GateRefused
from vouch.gate.identity import Identity, fold, same
from vouch.gate.records import Proposal
from vouch.store.kb import KB

TRUSTED_ROLE = "trusted-agent"
WITHDRAW_EVENT = "proposal.withdraw"  # a rejection by the proposer: a withdrawal
WITHDRAWN_TRAILER = "Vouch-Withdrawn"
ALLOW_SELF = "review.allow_self_approval"
SELF_HINT = (
    "another person reviews and approves it; a person working alone sets "
    "`review.allow_self_approval: true` in the committed .vouch/config.yaml"
)


def self_allowed(settings: Config) -> bool:
    return settings.get(ALLOW_SELF) is True or settings.get("review.approver_role") == TRUSTED_ROLE


def check(decider: Identity, proposal: Proposal, settings: Config) -> bool:
    """Whether this approval is a self-approval the settings allow (True), not one
    (False); GateRefused when it is one they do not allow."""
    proposer = proposal.identity()
    if not proposer.name and not proposer.email:
        raise GateRefused(
            f"proposal {proposal.id} names no author, so nobody can tell who proposed it",
            hint="reject it, and propose the content again with vouch",
        )
    if not same(decider, proposer):
        return False
    if self_allowed(settings):
        return True
    raise GateRefused(
        f"{decider.describe()} cannot approve proposal {proposal.id}: it was proposed by "
        f"{proposer.describe()}, the same person, who cannot also approve it",
        hint=SELF_HINT,
    )


def withdraws(decider: Identity, proposal: Proposal) -> bool:
    """Whether a rejection by `decider` is the proposer taking their own proposal back:
    the same e-mail (else, without e-mails, the same name). Narrower than `same`, which
    also counts a `--as` label: a label never turns a reviewer's no into a withdrawal."""
    proposer = proposal.identity()
    return one_principal(decider.name, decider.email, proposer.name, proposer.email)


def one_principal(name: str, email: str | None, other: str, other_email: str | None) -> bool:
    """Two principals as a decision record names them (name, e-mail): one when their
    e-mails match, or, when either has none, their names (all folded)."""
    if email and other_email:
        return fold(email) == fold(other_email)
    return fold(name) == fold(other) != ""


def withdrawal(withdrawn: bool) -> dict[str, Any]:
    """What a withdrawal adds to the decision record (a rejection's `decision`
    stays `rejected`, so that every reader of records keeps two outcomes)."""
    return {"withdrawn": True} if withdrawn else {}


def withdrawn_trailer(withdrawn: bool) -> dict[str, str | None]:
    return {WITHDRAWN_TRAILER: "true" if withdrawn else None}


def check_keys(
    kb: KB, decision_commit: str, proposal: Proposal, settings: Config, self_approved: bool
) -> bool:
    """With signed decisions required: whether the decision commit is signed with the
    key that signed the proposal (a self-approval, whatever the names say). Refused
    (GateRefused) when it is and the settings do not allow it."""
    if settings.get("review.require_signed_decisions") is not True or self_approved:
        return self_approved
    mine = kb.repo.signing_key(decision_commit)
    if mine is None:
        return False  # an unsigned decision: `lint --since` fails it where it counts
    theirs = kb.repo.signing_key(proposal.commit)
    if theirs is None:
        # an unsigned proposal's author is typed text: anyone could have proposed it
        # under another person's name and then approved it with their own key
        raise GateRefused(
            f"proposal {proposal.id} is not signed, and review.require_signed_decisions "
            "makes a key the identity of whoever proposes as well as whoever decides",
            hint="the proposer proposes it again from a clone that signs its commits "
            "(git config commit.gpgsign true)",
        )
    _signed_as_proposed(kb, decision_commit, proposal)
    if mine != theirs:
        return False
    if self_allowed(settings):
        return True
    raise GateRefused(
        f"the key that signs this decision ({mine}) signed proposal {proposal.id}: it is "
        "the proposer's own, whatever name either commit carries",
        hint=SELF_HINT,
    )


def _signed_as_proposed(kb: KB, decision_commit: str, proposal: Proposal) -> None:
    """A signed proposal's signature is good — judged by the allowed signers the target
    branch committed (`review.allowed_signers`, else the clone's) — and names whoever
    made the commit (the operator, for an agent's): a key nobody listed, or a listed
    key under another person's name, would make the proposer whoever they typed."""
    from vouch.gate import signers, trusted_keys
    from vouch.gate.identity import forms

    parents = kb.repo.commit_parents(decision_commit)
    trust = trusted_keys.at(kb, parents[0] if parents else "")
    sig = signers.verified(kb, [proposal.commit], judged_by=lambda _: trust).get(proposal.commit)
    hint = (
        "the proposer proposes it again, signed with their own key listed in the allowed "
        "signers (review.allowed_signers)"
    )
    if sig is None or not sig.good:
        raise GateRefused(
            f"proposal {proposal.id} is signed by a key the allowed signers do not hold, "
            "and review.require_signed_decisions makes the signer the proposer",
            hint=hint,
        )
    who = proposal.identity()
    principal = who.operator if who.agent and who.operator else f"{who.name} <{who.email}>"
    if not forms(sig.signer) & forms(principal):
        raise GateRefused(
            f"proposal {proposal.id} names {principal!r} as its proposer but is signed "
            f"by {sig.signer!r}",
            hint=hint,
        )


def record_fields(proposal: Proposal, decider: Identity, self_approved: bool) -> dict[str, Any]:
    """What a decision record keeps about both principals, beside `proposer` and
    `decided_by` (their names)."""
    return {
        "proposer_email": proposal.proposer_email or None,
        "proposer_operator": proposal.operator,
        "proposed_as": proposal.label,
        "decider_email": decider.email or None,
        "decider_operator": decider.operator if decider.agent else None,
        "decided_as": decider.label,
        "self_approved": True if self_approved else None,
    }


def trailers(decider: Identity, self_approved: bool) -> dict[str, str | None]:
    return {
        "Vouch-Approver-Email": decider.email or None,
        "Vouch-As": decider.label,
        "Vouch-Self-Approved": "true" if self_approved else None,
    }


def event_fields(decider: Identity, self_approved: bool) -> dict[str, Any]:
    """What the decision's audit event adds: the `--as` label, and a self-approval."""
    out: dict[str, Any] = {}
    if decider.label:
        out["as"] = decider.label
    if self_approved:
        out["self_approved"] = True
    return out


def self_approval_note(settings: Config) -> str | None:
    """What `vouch status` and `doctor` say when the committed configuration (of the
    checked-out branch: `committed.settings_at`) lets a person approve their own
    proposals; None otherwise."""
    if settings.get(ALLOW_SELF) is True:
        return (
            f"{ALLOW_SELF} is on (committed): a person may approve their own proposals; "
            "each such decision is recorded as self_approved"
        )
    if settings.get("review.approver_role") == TRUSTED_ROLE:
        return (
            f"review.approver_role is {TRUSTED_ROLE} (committed): anyone may approve their "
            "own proposals; each such decision is recorded as self_approved"
        )
    return None
