"""What a decision commit holds: the decision record, the commit message and its
trailers, the audit events (the proposal's creation and the decision), the object with
`approved_by` set, and the author — built alike by approve, reject, a withdrawal and a
decision recorded after a merge outside vouch (`vouch.gate.decide`)."""

from __future__ import annotations

from typing import Any

from vouch.core import ids, yamlio
from vouch.errors import CorruptFile
from vouch.gate import records, seals
from vouch.gate.identity import Identity
from vouch.gate.records import Proposal
from vouch.kinds import Kind
from vouch.store import writer
from vouch.store.kb import KB


def with_approver(kind: Kind, text: str, actor: str, where: str) -> str:
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
            if candidate and kind.load(candidate, where=where) == {**current, "approved_by": actor}:
                return candidate
        except CorruptFile:
            pass
    return kind.edit(text, {"approved_by": actor}, where=where)


def record(
    proposal: Proposal,
    decision: str,
    actor: str,
    reason: str | None,
    note: str | None = None,
    people: dict[str, Any] | None = None,
    blobs: dict[str, str] | None = None,
) -> bytes:
    """The `decided/<id>.yaml` record's bytes."""
    record: dict[str, Any] = {
        "proposal_id": proposal.id,
        "decision": decision,
        "kind": proposal.kind,
        "object_id": proposal.object_id,
        "proposer": proposal.proposer,
        "decided_by": actor,
        "decided_at": ids.now_iso(),
        "reason": reason or None,
        "base": proposal.base,
        # the commit that was reviewed: `pins.pinned` refused anything but the pinned one
        "proposal_commit": proposal.commit,
        "note": note,
        **(people or {}),  # e-mails, operators, labels, self_approved (`deciders`)
        seals.FIELD: blobs or None,  # the approved bytes (vouch.gate.seals)
    }
    return yamlio.dump_yaml({k: v for k, v in record.items() if v is not None}).encode()


def message(
    proposal: Proposal,
    decision: str,
    actor: str,
    reason: str,
    chain: str,
    subject: str | None = None,
    extra: dict[str, str | None] | None = None,
) -> str:
    """The decision commit's message: `vouch: approve|reject <kind> <id>` plus trailers."""
    verb = "approve" if decision == "approved" else "reject"
    return records.message(
        subject or f"vouch: {verb} {proposal.kind} {proposal.object_id}",
        reason,
        {
            "Vouch-Proposal": proposal.id,
            "Vouch-Decision": decision,
            "Vouch-Approver": actor,
            "Vouch-Proposer": proposal.proposer,
            "Vouch-Kind": proposal.kind,
            "Vouch-Object": proposal.object_id,
            "Vouch-Proposal-Commit": proposal.commit,
            **(extra or {}),
            writer.AUDIT_HEAD: chain,
        },
    )


def events(
    proposal: Proposal, event: str, actor: str, data: dict[str, Any]
) -> list[tuple[str, str, list[str], dict[str, Any]]]:
    """The proposal's creation (read from its trailers) and the decision, as audit events."""
    created = {
        "kind": proposal.kind,
        "base": proposal.base,
        "commit": proposal.commit,
        "proposed_at": proposal.created_at,
    }
    objects = [proposal.id, proposal.object_id]
    return [
        ("proposal.create", proposal.proposer, objects, created),
        (event, actor, objects, {"kind": proposal.kind, "proposer": proposal.proposer, **data}),
    ]


def author(who: Identity) -> tuple[str, str] | None:
    """A decision commit's author: whoever decides (the identity vouch decides as, the
    committer's), whatever GIT_AUTHOR_* or `author.*` say — `git log` names the person
    the decision record names, as a proposal commit names its proposer. A decider
    without an e-mail (a name a trusted host gave) leaves git's author as it is."""
    return (who.name, who.email) if who.email else None


def logs(
    kb: KB, tip: str, events: list[tuple[str, str, list[str], dict[str, Any]]]
) -> tuple[dict[str, str | None], str]:
    logs, chain = writer.audit_changes(kb, tip, events)
    return {kb.rel(p): kb.repo.write_blob(b) for p, b in logs.items()}, chain
