"""What was reviewed: a decision is about the commit someone saw.

`vouch show` records the commit it displayed (refs/vouch/reviewed/<id>); `--expect`
names one explicitly, by its whole id (a 7-digit prefix can be matched by a commit built
to share it). A decision with neither, or on a proposal that changed since, is refused.
"""

from __future__ import annotations

import re

from vouch.errors import GateRefused, UsageError
from vouch.gate import records
from vouch.gate.records import Proposal
from vouch.store.kb import KB
from vouch.store.landing import RefUpdate

FULL_COMMIT = re.compile(r"[0-9a-fA-F]{40}|[0-9a-fA-F]{64}")


def pinned(kb: KB, proposal: Proposal, expect: str | None) -> list[RefUpdate]:
    """Refuse a proposal that nobody pinned, or that changed since it was reviewed; the
    reviewed ref to drop.

    `expect` pins the commit explicitly, by its full id (a prefix can be matched by
    another commit built to share it); otherwise the commit `vouch show` last displayed
    in this clone (refs/vouch/reviewed/<id>) must still be the tip. Neither: refused,
    naming the full commit to pass — a decision is about a commit someone saw.
    """
    ref = records.REVIEWED_PREFIX + proposal.id
    reviewed = kb.repo.peek(ref)
    if expect is not None:
        if not isinstance(expect, str) or not FULL_COMMIT.fullmatch(expect):
            raise UsageError(
                f"--expect {str(expect)[:80]!r} is not a full commit id",
                hint=f"pass the whole id of the commit you reviewed ({len(proposal.commit)} "
                f"hex digits); proposal {proposal.id} is now {proposal.commit} — check it "
                "is the one you saw, or review it again with `vouch show "
                f"{proposal.id}`",
            )
        if expect.lower() != proposal.commit:
            raise _changed(proposal, expect)
    elif reviewed is None:
        raise GateRefused(
            f"nobody reviewed proposal {proposal.id} in this clone: a decision pins the "
            "commit it is about",
            hint=f"review it with `vouch show {proposal.id}` (or `vouch review`), or pass "
            f"the commit you reviewed: `vouch approve {proposal.id} --expect "
            f"{proposal.commit}`",
        )
    elif reviewed != proposal.commit:
        raise _changed(proposal, reviewed)
    return [(ref, None, reviewed)] if reviewed else []


def _changed(proposal: Proposal, seen: str) -> GateRefused:
    return GateRefused(
        f"proposal {proposal.id} is now commit {proposal.commit}, not the "
        f"{seen} that was reviewed: it changed after review",
        hint=f"review it again (vouch show {proposal.id}), then approve what you saw",
    )
