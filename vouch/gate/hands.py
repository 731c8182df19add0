"""Whose hands made a decision: its commit's git committer decides along with its approver.

A trusted host names the person it authenticated (`approver: "Rita"`) and the server's
starter writes the commit; a committed agent-host file can make anyone that starter. So
the approver a decision names is not the whole of who decided it: the git identity that
commits the decision commit (the process that writes it) is a decider too. When that
identity is the proposer's — same e-mail or same name, folded (`identity.same`) — the
proposer approved their own proposal, whatever name the decision records (the fifth
outsider's `.mcp.json` attack). Refused at approve time, and found in history by the
checks (`findings`: `audit --verify`, `doctor`, `lint --since`), unless the committed
configuration allows self-approval (`deciders.self_allowed`), the decision then recorded
as self-approved.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence

from vouch.core import ids, yamlio
from vouch.core.config import Config
from vouch.errors import CorruptFile, GateRefused
from vouch.gate.deciders import SELF_HINT, TRUSTED_ROLE, self_allowed
from vouch.gate.identity import Identity, same
from vouch.gate.records import Proposal
from vouch.store.kb import KB, decided_path

SELF_TRAILER = "Vouch-Self-Approved"


def committed_by_proposer(committer: tuple[str, str], proposer: str, email: str | None) -> bool:
    """Whether a commit's committer (name, e-mail) is the proposer (name, e-mail)."""
    return same(Identity(committer[0], committer[1]), Identity(proposer, email or ""))


def check(kb: KB, proposal: Proposal, settings: Config) -> bool:
    """At approve time: whether the decision this process would commit is a self-approval
    the settings allow (True) or no self-approval (False); GateRefused when its committer
    is the proposer and the settings do not allow that."""
    committer = kb.repo.identity()
    if not committed_by_proposer(committer, proposal.proposer, proposal.proposer_email):
        return False
    if self_allowed(settings):
        return True
    name, email = committer
    raise GateRefused(
        f"this decision would be committed by {name} <{email}>, who proposed {proposal.id}: "
        "an approval committed by its proposer is their own, whatever approver it names",
        hint=SELF_HINT,
    )


def findings(
    kb: KB,
    decisions: Sequence[tuple[str, list[str], Callable[[str], str]]],
    settings_at: Callable[[str], Config],
) -> list[tuple[str, str]]:
    """(commit, what is wrong) for each approval in `decisions` — (commit, parents,
    trailer getter) — whose git committer is its proposer, unless the configuration
    committed on its parent allowed it (`review.approver_role: trusted-agent`, or
    `review.allow_self_approval` with the decision saying `Vouch-Self-Approved`)."""
    from vouch.git.history import committers

    approvals = [d for d in decisions if d[2]("Vouch-Decision") == "approved"]
    if not approvals:
        return []
    made_by = committers(kb.repo, [sha for sha, _, _ in approvals])
    names = []
    for sha, _, one in approvals:
        pid = one("Vouch-Proposal")
        names.append(f"{sha}:{kb.rel(decided_path(pid))}" if ids.is_proposal_id(pid) else sha)
    out = []
    for (sha, parents, one), found in zip(approvals, kb.repo.store.read_many(names), strict=True):
        committer = made_by.get(sha)
        proposer, email = one("Vouch-Proposer"), _proposer_email(found)
        if committer is None or not committed_by_proposer(committer, proposer, email):
            continue
        settings = settings_at(parents[0] if parents else "")
        if settings.get("review.approver_role") == TRUSTED_ROLE or (
            self_allowed(settings) and one(SELF_TRAILER) == "true"
        ):
            continue
        out.append(
            (
                sha,
                f"decision commit {sha[:12]} approves proposal {one('Vouch-Proposal')} by "
                f"{proposer!r} and was committed by {committer[0]} <{committer[1]}>, its "
                f"proposer: a self-approval, whatever approver "
                f"({one('Vouch-Approver')!r}) it names",
            )
        )
    return out


def _proposer_email(found: tuple[str, bytes] | None) -> str | None:
    """The `proposer_email` a decision record keeps, when it can be read."""
    if found is None or found[0] != "blob":
        return None
    with contextlib.suppress(CorruptFile, UnicodeDecodeError):
        record = yamlio.load_yaml(found[1].decode("utf-8"), where="decision record")
        value = record.get("proposer_email") if isinstance(record, dict) else None
        return value if isinstance(value, str) else None
    return None
