"""The gated kb.* methods: thin adapters from a CallContext to the gate.

Parameters and results follow spec/kb-methods.md. Invalid input to a propose method is
a result (`valid: false` with every error), as the spec says; the CLI turns it into E102.
"""

from __future__ import annotations

from typing import Any

from vouch.errors import UsageError
from vouch.gate import decide, pending, propose
from vouch.gate.identity import Identity, check_name
from vouch.methods.context import CallContext
from vouch.store import audit, evidence


def propose_claim(
    ctx: CallContext,
    text: str,
    evidence: list[str] | None = None,
    type: str | None = None,
    confidence: float | None = None,
    entities: list[str] | None = None,
    scope: str | None = None,
    tags: list[str] | None = None,
    session_id: str | None = None,
    rationale: str | None = None,
    dry_run: bool = False,
    again: bool = False,
) -> dict[str, Any]:
    values = {
        "text": text,
        "evidence": list(evidence or []),
        "type": type,
        "confidence": confidence,
        "entities": entities,
        "scope": scope,
        "tags": sorted(set(tags)) if tags else None,
    }
    return propose.propose(
        ctx.kb,
        ctx.identity(),
        "claim",
        values,
        rationale=rationale,
        session_id=session_id,
        dry_run=dry_run,
        again=again,
    )


def propose_page(
    ctx: CallContext,
    title: str,
    body: str | None = None,
    type: str | None = None,
    claims: list[str] | None = None,
    entities: list[str] | None = None,
    sources: list[str] | None = None,
    tags: list[str] | None = None,
    session_id: str | None = None,
    rationale: str | None = None,
    dry_run: bool = False,
    again: bool = False,
) -> dict[str, Any]:
    values = {
        "title": title,
        "body": body or "",
        "type": type,
        "claims": claims,
        "entities": entities,
        "sources": sources,
        "tags": sorted(set(tags)) if tags else None,
    }
    return _propose(ctx, "page", values, session_id, rationale, dry_run, again)


def propose_entity(
    ctx: CallContext,
    name: str,
    type: str,
    aliases: list[str] | None = None,
    description: str | None = None,
    session_id: str | None = None,
    rationale: str | None = None,
    dry_run: bool = False,
    again: bool = False,
) -> dict[str, Any]:
    values = {"name": name, "type": type, "aliases": aliases, "description": description}
    return _propose(ctx, "entity", values, session_id, rationale, dry_run, again)


def propose_relation(
    ctx: CallContext,
    source: str,
    relation: str,
    target: str,
    confidence: float | None = None,
    evidence: list[str] | None = None,
    session_id: str | None = None,
    rationale: str | None = None,
    dry_run: bool = False,
    again: bool = False,
) -> dict[str, Any]:
    values = {
        "source": source,
        "relation": relation,
        "target": target,
        "confidence": confidence,
        "evidence": evidence,
    }
    return _propose(ctx, "relation", values, session_id, rationale, dry_run, again)


def _propose(
    ctx: CallContext,
    kind: str,
    values: dict[str, Any],
    session_id: str | None,
    rationale: str | None,
    dry_run: bool,
    again: bool,
) -> dict[str, Any]:
    return propose.propose(
        ctx.kb,
        ctx.identity(),
        kind,
        values,
        rationale=rationale,
        session_id=session_id,
        dry_run=dry_run,
        again=again,
    )


def revise_proposal(
    ctx: CallContext, proposal_id: str, rationale: str | None = None, **changes: Any
) -> dict[str, Any]:
    from vouch.gate import revise

    return revise.revise(ctx.kb, ctx.identity(), proposal_id, changes, rationale)


def comment_proposal(ctx: CallContext, proposal_id: str, text: str) -> dict[str, Any]:
    from vouch.gate import revise

    return revise.comment(ctx.kb, ctx.identity(), proposal_id, text)


def list_pending(
    ctx: CallContext, limit: int = 50, offset: int = 0, filter: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    return pending.list_pending(ctx.kb, limit, offset, filter)


def read_proposal(ctx: CallContext, id: str) -> dict[str, Any]:
    """The review screen (`vouch.review.screen`). A person looking at a proposal at the
    CLI pins what approve may merge."""
    from vouch.review.screen import review

    return review(ctx.kb, id, record=ctx.transport == "cli", warm=ctx.warm)


def approve(
    ctx: CallContext,
    proposal_id: str,
    reason: str | None = None,
    approver: str | None = None,
    expect: str | None = None,
    together: list[str] | None = None,
) -> dict[str, Any]:
    # `approver` speaks for someone else: only a trusted transport may say it.
    if approver is not None and not ctx.trusted:
        raise UsageError(
            "approver may only be set by a trusted caller",
            hint="the server must run with --trusted-host",
        )
    actor = ctx.identity()
    if approver and approver.strip():
        # a trusted host names the person it authenticated; its operator runs vouch
        actor = Identity(check_name(approver, "approver"), operator=actor.who)
    result = decide.approve(
        ctx.kb, actor, proposal_id, reason, expect=expect, together=together or ()
    )
    for approved in result.get("approved") or [result]:
        if approved.get("change") in FORGETTING:
            from vouch.search.access import forget_decided

            forget_decided(ctx.kb, ctx.warm, str(approved["commit"]))
    return result


FORGETTING = ("redact", "delete")  # changes whose words must leave the index at once


def reject(
    ctx: CallContext, proposal_id: str, reason: str, expect: str | None = None
) -> dict[str, Any]:
    result = decide.reject(ctx.kb, ctx.identity(), proposal_id, reason, expect=expect)
    return {
        "ok": result["ok"],
        "proposal_id": result["proposal_id"],
        "waited_on_by": result.get("waited_on_by", []),
        "withdrawn": bool(result.get("withdrawn")),  # the proposer's own: a withdrawal
    }


def audit_events(
    ctx: CallContext, tail: int | None = None, filter: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    filter = filter or {}
    unknown = sorted(set(filter) - {"event", "actor"})
    if unknown:
        raise UsageError(
            f"kb.audit: unknown filter key(s) {', '.join(unknown)}",
            hint="filter by event and/or actor",
        )
    return audit.query(ctx.kb.dir, tail, filter.get("event"), filter.get("actor"))


def audit_verify(ctx: CallContext, anchor: str | None = None) -> dict[str, Any]:
    from vouch.gate import provenance

    return provenance.verify(ctx.kb, anchor)


def audit_anchor(ctx: CallContext) -> dict[str, Any]:
    """A maintenance write that vouches for the history: a person's, like a decision."""
    from vouch.gate import anchor
    from vouch.methods.deciding import require_decider

    require_decider(ctx, "kb.audit_anchor")
    return anchor.make(ctx.kb, ctx.actor())


def register_evidence(
    ctx: CallContext, source_id: str, locator: str, quote: str | None = None
) -> dict[str, Any]:
    return evidence.register_evidence(ctx.kb, ctx.actor(), source_id, locator, quote)
