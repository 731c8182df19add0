"""Who proposed a proposal: the author of its first commit, never of a later revision.

A proposal branch is a line of commits from its recorded base: the one that created it,
then its revisions. Anyone who can push can put one more commit on it — a "revision"
under their own name — and the tip's author used to be read as the proposer: Ada added
one to Bob's proposal and rejected it, and the record said Ada withdrew her own
proposal, Bob gone from it (the fifth outsider, row 45). So the proposer is read from the
first commit of the line (its first parents back to the base); a later revision by
anyone else changes nothing of who proposed it — approve refuses it (`verify`: every
revision is its proposer's), and a rejection by its author is a reviewer's rejection.
A branch that is no line from its base has no known proposer: nobody withdraws it.
"""

from __future__ import annotations

from dataclasses import replace

from vouch.errors import VouchError
from vouch.gate import records
from vouch.gate.records import Proposal
from vouch.store.kb import KB


def first_commit(kb: KB, proposal: Proposal) -> str | None:
    """The commit that created the proposal (its first parents back to its recorded
    base, at most MAX_REVISIONS + 1 commits); None when the branch is no such line."""
    if not proposal.base_commit:
        return None
    commit = proposal.commit
    try:
        for _ in range(records.MAX_REVISIONS + 1):
            parents = kb.repo.commit_parents(commit)
            if not parents:
                return None
            if parents[0] == proposal.base_commit:
                return commit
            commit = parents[0]
    except VouchError:
        return None
    return None


def of(kb: KB, proposal: Proposal) -> Proposal:
    """The proposal with its proposer read from its first commit (unchanged when the
    branch is no line from its base, or the tip is that commit)."""
    first = first_commit(kb, proposal)
    if first is None or first == proposal.commit:
        return proposal
    found = records.with_people(kb, replace(proposal, commit=first))
    return replace(
        proposal,
        proposer=found.proposer,
        proposer_email=found.proposer_email,
        operator=found.operator,
    )


def known(kb: KB, proposal: Proposal) -> bool:
    """Whether who proposed it can be told: a proposal made before vouch recorded bases
    (one commit, no base) by its commit's author, else by its first commit."""
    return not proposal.base_commit or first_commit(kb, proposal) is not None
