"""`vouch propose-* / pending / approve / reject / audit / evidence add`: the review gate."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from vouch import ops
from vouch.callctx import CallContext
from vouch.cli import cli
from vouch.cli.options import Output, kb_command, split_csv
from vouch.errors import NotFound, UsageError
from vouch.gate.propose import require_valid


def _proposed(out: Output, result: dict[str, Any], kind: str) -> None:
    """Print the proposal id alone on stdout; say on stderr what else happened."""
    require_valid(result, kind)
    object_id = result.get(f"{kind}_id")
    if out.json:
        out.emit(result)
    elif result.get("duplicate") == "durable":
        out.info(f"{kind} {object_id} is already approved; nothing proposed")
    elif result.get("duplicate") == "pending":
        out.info(f"{kind} {object_id} is already pending in this proposal")
        click.echo(result["proposal_id"])
    elif result.get("proposal_id") is None:
        out.info(f"valid: {kind} {object_id} (dry run, nothing written)")
    else:
        click.echo(result["proposal_id"])


_DRY = click.option("--dry-run", is_flag=True, help="Validate only; write nothing.")


@cli.command("propose-claim")
@click.option("--text", required=True, help="The statement.")
@click.option("--source", "sources", multiple=True, metavar="ID",
              help="A source id it cites (repeatable).")
@click.option("--evidence", "evidence", multiple=True, metavar="ID",
              help="An evidence id, or SOURCE_ID:L10-L20 to cite a span (repeatable).")
@click.option("--type", "type_", default="observation", show_default=True, help="Claim type.")
@click.option("--confidence", type=float, default=0.7, show_default=True, help="0..1")
@click.option("--tags", help="Comma-separated tags.")
@click.option("--entity", "entities", multiple=True, metavar="ID", help="Entity id (repeatable).")
@click.option("--scope", help="private, project, team or public.")
@click.option("--rationale", help="Why this claim; recorded on the proposal.")
@click.option("--session", "session_id", metavar="ID", help="The session it came from.")
@_DRY
@kb_command()
def propose_claim_cmd(ctx: CallContext, out: Output, text: str, sources: tuple[str, ...],
                      evidence: tuple[str, ...], type_: str, confidence: float,
                      tags: str | None, entities: tuple[str, ...], scope: str | None,
                      rationale: str | None, session_id: str | None, dry_run: bool) -> None:
    """Propose a claim; prints the proposal id."""
    result = ops.invoke(ctx, "kb.propose_claim", {
        "text": text, "evidence": [*sources, *evidence], "type": type_,
        "confidence": confidence, "tags": split_csv(tags) or None,
        "entities": list(entities) or None, "scope": scope, "rationale": rationale,
        "session_id": session_id, "dry_run": dry_run})
    _proposed(out, result, "claim")


@cli.command("propose-entity")
@click.option("--name", required=True)
@click.option("--type", "type_", required=True, help="person, project, system, concept, ...")
@click.option("--alias", "aliases", multiple=True, help="Another name (repeatable).")
@click.option("--description")
@_DRY
@kb_command()
def propose_entity_cmd(ctx: CallContext, out: Output, name: str, type_: str,
                       aliases: tuple[str, ...], description: str | None,
                       dry_run: bool) -> None:
    """Propose an entity; prints the proposal id."""
    result = ops.invoke(ctx, "kb.propose_entity", {
        "name": name, "type": type_, "aliases": list(aliases) or None,
        "description": description, "dry_run": dry_run})
    _proposed(out, result, "entity")


@cli.command("propose-relation")
@click.option("--from", "source", required=True, metavar="ID")
@click.option("--rel", "relation", required=True, metavar="TYPE",
              help="uses, depends_on, supports, ...")
@click.option("--to", "target", required=True, metavar="ID")
@click.option("--confidence", type=float, default=0.7, show_default=True)
@click.option("--evidence", "evidence", multiple=True, metavar="ID")
@_DRY
@kb_command()
def propose_relation_cmd(ctx: CallContext, out: Output, source: str, relation: str,
                         target: str, confidence: float, evidence: tuple[str, ...],
                         dry_run: bool) -> None:
    """Propose a relation FROM --rel TYPE TO; prints the proposal id."""
    result = ops.invoke(ctx, "kb.propose_relation", {
        "source": source, "relation": relation, "target": target, "confidence": confidence,
        "evidence": list(evidence) or None, "dry_run": dry_run})
    _proposed(out, result, "relation")


@cli.command("propose-page")
@click.option("--title", required=True)
@click.option("--type", "type_", default="concept", show_default=True)
@click.option("--body", "body_file", metavar="FILE|-", help="Markdown body from FILE or stdin.")
@click.option("--claim", "claims", multiple=True, metavar="ID", help="A claim id (repeatable).")
@click.option("--entity", "entities", multiple=True, metavar="ID")
@click.option("--source", "sources", multiple=True, metavar="ID")
@click.option("--tags", help="Comma-separated tags.")
@_DRY
@kb_command()
def propose_page_cmd(ctx: CallContext, out: Output, title: str, type_: str,
                     body_file: str | None, claims: tuple[str, ...], entities: tuple[str, ...],
                     sources: tuple[str, ...], tags: str | None, dry_run: bool) -> None:
    """Propose a page; prints the proposal id."""
    body = None
    if body_file == "-":
        body = sys.stdin.read()
    elif body_file:
        try:
            body = Path(body_file).read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise NotFound(f"no such file: {body_file}") from exc
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read {body_file}: {exc}") from exc
    result = ops.invoke(ctx, "kb.propose_page", {
        "title": title, "type": type_, "body": body, "claims": list(claims) or None,
        "entities": list(entities) or None, "sources": list(sources) or None,
        "tags": split_csv(tags) or None, "dry_run": dry_run})
    _proposed(out, result, "page")


def _pending_human(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "No open proposals."
    lines = [f"{'PROPOSAL':<26}{'KIND':<10}{'PROPOSER':<18}TITLE"]
    for r in rows:
        origin = "" if r["ref"].startswith("refs/heads/") else "  (remote)"
        lines.append(f"{r['proposal_id']:<26}{r['kind']:<10}{r['proposer'][:17]:<18}"
                     f"{r['title'][:70]}{origin}")
    return "\n".join(lines)


@cli.command("pending")
@click.option("--limit", type=click.IntRange(min=0), default=50, show_default=True)
@click.option("--offset", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--kind", help="Only proposals of this kind.")
@click.option("--proposer", help="Only proposals by this actor.")
@kb_command()
def pending_cmd(ctx: CallContext, out: Output, limit: int, offset: int, kind: str | None,
                proposer: str | None) -> None:
    """Open proposals, oldest first."""
    wanted = {k: v for k, v in (("kind", kind), ("proposer", proposer)) if v}
    rows = ops.invoke(ctx, "kb.list_pending",
                      {"limit": limit, "offset": offset, "filter": wanted or None})
    out.emit(rows, _pending_human)


@cli.command("approve")
@click.argument("proposal_ids", nargs=-1, required=True, metavar="ID...")
@click.option("--reason", help="Why; recorded in the merge commit and decision record.")
@click.option("--expect", metavar="COMMIT",
              help="Approve only if the proposal is still this commit (as `vouch show` "
                   "printed it); one ID only.")
@kb_command()
def approve_cmd(ctx: CallContext, out: Output, proposal_ids: tuple[str, ...],
                reason: str | None, expect: str | None) -> None:
    """Approve proposals: merge each into its base branch. Stops at the first refusal.

    A proposal changed since `vouch show` displayed it here is refused.
    """
    if expect and len(proposal_ids) > 1:
        raise UsageError("--expect pins one proposal", hint="approve one ID at a time")
    results = []
    for pid in proposal_ids:
        result = ops.invoke(ctx, "kb.approve",
                            {"proposal_id": pid, "reason": reason, "expect": expect})
        results.append(result)
        if not out.json:
            click.echo(f"approved {pid} → {result['object_kind']} {result['object_id']}")
    if out.json:
        out.emit(results if len(results) > 1 else results[0])


@cli.command("reject")
@click.argument("proposal_id", metavar="ID")
@click.option("--reason", required=True, help="Why (required).")
@kb_command()
def reject_cmd(ctx: CallContext, out: Output, proposal_id: str, reason: str) -> None:
    """Reject a proposal; its commit stays under refs/vouch/rejected/ID."""
    result = ops.invoke(ctx, "kb.reject", {"proposal_id": proposal_id, "reason": reason})
    out.emit(result, lambda r: f"rejected {r['proposal_id']}")


def _audit_human(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "(no events)"
    return "\n".join(
        f"{r.get('created_at', '?'):<21} {r.get('event', '?'):<20} {str(r.get('actor'))[:20]:<21}"
        f"{' '.join(map(str, r.get('object_ids') or []))[:80]}" for r in rows)


def _verify_human(report: dict[str, Any]) -> str:
    head = (f"audit log OK: {report['events']} events in {report['files']} file(s)"
            if report["ok"] else f"audit log BROKEN: {len(report['issues'])} problem(s)")
    lines = [head] + [f"  {i['file']}:{i['line'] or '-'}: {i['detail']}"
                      for i in report["issues"]]
    return "\n".join(lines)


@cli.command("audit")
@click.option("--tail", type=click.IntRange(min=0), help="Only the newest N events.")
@click.option("--event", help="Only this event (and its dotted children, e.g. proposal).")
@click.option("--actor", "by_actor", help="Only events by this actor.")
@click.option("--verify", is_flag=True, help="Check the hash chain instead of listing.")
@kb_command()
def audit_cmd(ctx: CallContext, out: Output, tail: int | None, event: str | None,
              by_actor: str | None, verify: bool) -> None:
    """The audit log: every mutation, hash-chained."""
    if verify:
        report = ops.invoke(ctx, "kb.audit_verify")
        out.emit(report, _verify_human)
        if not report["ok"]:
            raise click.exceptions.Exit(1)
        return
    wanted = {k: v for k, v in (("event", event), ("actor", by_actor)) if v}
    rows = ops.invoke(ctx, "kb.audit", {"tail": tail, "filter": wanted or None})
    out.emit(rows, _audit_human)


@cli.group("evidence")
def evidence_group() -> None:
    """Span pointers into sources."""


@evidence_group.command("add")
@click.argument("source_id", metavar="SOURCE_ID")
@click.argument("locator", metavar="LOCATOR")
@click.option("--quote", help="Text that must appear in the span.")
@kb_command()
def evidence_add_cmd(ctx: CallContext, out: Output, source_id: str, locator: str,
                     quote: str | None) -> None:
    """Point at LOCATOR (L10-L20, L7, #anchor) in a source; prints the evidence id."""
    result = ops.invoke(ctx, "kb.register_evidence",
                        {"source_id": source_id, "locator": locator, "quote": quote})
    out.emit(result, lambda r: r["id"])
