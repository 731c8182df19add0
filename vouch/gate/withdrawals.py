"""A withdrawal needs no approver: a proposer takes back only their own proposal.

With `review.approvers` committed, every decision had to be made by one of them, so a
proposer who is not an approver withdrew from the CLI and `doctor`, `audit --verify` and
`lint --since` then failed that withdrawal forever — vouch's own write, red (the fifth
outsider, row 2). A decision commit that says it is its proposer's withdrawal is exempt
from the approvers list (not from a signature, when signatures are required); that it
is one — its record, trailer and e-mails agree, decider and proposer one principal — is
what `auditproof.withdrawal` checks of every decision.
"""

from __future__ import annotations

from collections.abc import Callable

from vouch.gate.deciders import WITHDRAWN_TRAILER
from vouch.gate.identity import fold


def by_proposer(trailer: Callable[[str], str]) -> bool:
    """Whether a decision commit's trailers (`trailer(key)`: the first value) say it is a
    withdrawal by its proposer: rejected, `Vouch-Withdrawn: true`, its approver the
    proposer (names folded)."""
    return (
        trailer("Vouch-Decision").strip() == "rejected"
        and trailer(WITHDRAWN_TRAILER).strip() == "true"
        and fold(trailer("Vouch-Approver")) == fold(trailer("Vouch-Proposer")) != ""
    )
